package dataset

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/tasks"
)

// verlRow is one prompt of verl's RL data layout.
type verlRow struct {
	DataSource  string      `parquet:"data_source"` // kernelgate/<suite>
	Prompt      []Message   `parquet:"prompt,list"`
	Ability     string      `parquet:"ability"`
	RewardModel rewardModel `parquet:"reward_model"`
	ExtraInfo   verlExtra   `parquet:"extra_info"`
	// TaskID repeats the task id as a top-level string column: OpenRLHF's
	// --label_key takes a column name, not a path into a struct.
	TaskID string `parquet:"task_id"`
}

type rewardModel struct {
	Style       string `parquet:"style"`        // "rule"
	GroundTruth string `parquet:"ground_truth"` // the task id: what compute_score sends as the task
}

type verlExtra struct {
	Split  string `parquet:"split"` // train or test
	Index  int64  `parquet:"index"` // position within the split
	TaskID string `parquet:"task_id"`
	Suite  string `parquet:"suite"` // the id's first segment (ci, level1, ...)
	Level  int64  `parquet:"level"` // N for suite level<N>, 0 for others (ci, api, synthetic)
	Name   string `parquet:"name"`  // the id's last segment
	// Prompt repeats the prompt: verl hands compute_score extra_info, not the
	// prompt, and the reward request logs it (clients/python verl.py).
	Prompt []Message `parquet:"prompt,list"`
}

// VerlAbility is every verl row's ability.
const VerlAbility = "triton_kernel"

// verl writes train.parquet and test.parquet from the suites' tasks.
func (b *build) verl() error {
	var ts []tasks.Task
	for _, t := range b.src.Tasks {
		if b.spec.Filter.task(t.ID) {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(x, y tasks.Task) int { return cmp.Compare(x.ID, y.ID) })
	test := testSplit(ts, b.spec.TestFraction)
	var train, tst []verlRow
	for _, t := range ts {
		suite, _, _ := strings.Cut(t.ID, "/")
		prompt := userPrompt(t.Source)
		row := verlRow{
			DataSource: "kernelgate/" + suite, Prompt: prompt, Ability: VerlAbility,
			RewardModel: rewardModel{Style: "rule", GroundTruth: t.ID},
			ExtraInfo:   verlExtra{TaskID: t.ID, Suite: suite, Level: int64(datasets.LevelOf(suite)), Name: t.Name, Prompt: prompt},
			TaskID:      t.ID,
		}
		if test[t.ID] {
			row.ExtraInfo.Split, row.ExtraInfo.Index = "test", int64(len(tst))
			tst = append(tst, row)
		} else {
			row.ExtraInfo.Split, row.ExtraInfo.Index = "train", int64(len(train))
			train = append(train, row)
		}
		file := "task:" + t.ID
		if f, ok := b.src.TaskFiles[t.ID]; ok {
			file = f
		}
		b.m.Sources = append(b.m.Sources, file)
	}
	if err := output(b, "train.parquet", train); err != nil {
		return err
	}
	return output(b, "test.parquet", tst)
}

// testSplit picks the test tasks: those whose id hashes below fraction, so
// a task stays on its side as suites grow. With two tasks or more and a
// positive fraction there is at least one test task and one train task.
func testSplit(ts []tasks.Task, fraction float64) map[string]bool {
	type scored struct {
		id string
		u  float64
	}
	all := make([]scored, len(ts))
	test := map[string]bool{}
	for i, t := range ts {
		sum := sha256.Sum256([]byte(t.ID))
		all[i] = scored{t.ID, float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)}
		if all[i].u < fraction {
			test[t.ID] = true
		}
	}
	if len(ts) < 2 {
		return test
	}
	slices.SortFunc(all, func(x, y scored) int { return cmp.Or(cmp.Compare(x.u, y.u), cmp.Compare(x.id, y.id)) })
	if len(test) == 0 && fraction > 0 {
		test[all[0].id] = true
	}
	if len(test) == len(ts) {
		delete(test, all[len(all)-1].id)
	}
	return test
}
