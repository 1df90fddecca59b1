package dataset

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// searchLog logs two searches through the real sink: s_1 over two days
// (day 1: a node, then an answer without code; day 2: a node under the
// first, an LLM error, a node under the second), s_2 on day 1 only; the
// nodes' evaluations too.
func searchLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	day2 := t0.Add(24 * time.Hour)
	prompt := []event.PromptMessage{{Role: "user", Content: "write a kernel"}}
	step := func(search string, seq, node, parent int, ts time.Time, reward float64) event.SearchStep {
		return event.SearchStep{EventID: event.SearchStepID(search, seq), Time: ts, SearchID: search, Seq: seq, TaskID: "ci/a",
			Node: node, Parent: parent, Action: "large", Prompt: prompt, Completion: "```python\nk\n```", Code: "k", Model: "m",
			EvalID: search + "-" + string(rune('0'+node)), Reward: reward, BestNode: node, CallIDs: []string{"c"}}
	}
	answer := event.SearchStep{EventID: "s_1.2", Time: t0.Add(time.Minute), SearchID: "s_1", Seq: 2, TaskID: "ci/a", Parent: 1,
		Action: "large", Prompt: prompt, Completion: "I would fuse the add.", Model: "m", BestNode: 1,
		Error: "large: no code in the answer", Failure: event.FailureAnswer}
	llm := event.SearchStep{EventID: "s_1.4", Time: day2.Add(time.Minute), SearchID: "s_1", Seq: 4, TaskID: "ci/a", Parent: 2,
		Action: "small", BestNode: 2, Error: "small.revise: llm: 503", Failure: event.FailureLLM}
	steps := []event.SearchStep{step("s_1", 1, 1, 0, t0, 0.05), answer, step("s_1", 3, 2, 1, day2, 0.5), llm,
		step("s_1", 5, 3, 2, day2.Add(2*time.Minute), 0.45), step("s_2", 1, 1, 0, t0, 0.4)}
	var out []logged
	for _, s := range steps {
		out = append(out, logged{event.SubjectSearchStep, s.EventID, s})
	}
	logEvents(t, dir, "w1", out...)
	writeLog(t, dir,
		ev{id: "s_1-1", task: "ci/a", code: "k", status: eval.StatusIncorrect, batch: "s_1", prompt: prompt},
		ev{id: "s_1-2", task: "ci/a", code: "k", status: ok, min: 24 * 60, batch: "s_1", prompt: prompt},
		ev{id: "s_1-3", task: "ci/a", code: "k", status: ok, min: 24*60 + 2, batch: "s_1", prompt: prompt},
		ev{id: "s_2-1", task: "ci/a", code: "k", status: ok, batch: "s_2", prompt: prompt},
	)
	return dir
}

// shape is what a tree row says about its place and its score.
type shape struct {
	search           string
	node, seq, depth int64 // -1: null
	reward, best     float64
	failure          string
}

func shapeOf(r treeRow) shape {
	or := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	orf := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	s := shape{search: r.SearchID, node: or(r.Node), seq: or(r.Seq), depth: or(r.Depth), reward: orf(r.Reward), best: orf(r.BestReward)}
	if r.Failure != nil {
		s.failure = *r.Failure
	}
	return s
}

// Every step is a row, a failed one with node and depth null and its
// failure; the root's reward is null (the task is no candidate), and
// best_reward is the best so far in step order.
func TestSearchTreesHoldFailedStepsAndTheBestSoFar(t *testing.T) {
	out, m := runExport(t, searchLog(t), Request{Format: "search-trees"})
	rows := read[treeRow](t, filepath.Join(out, "search_trees.parquet"))
	var got []shape
	for _, r := range rows {
		got = append(got, shapeOf(r))
	}
	want := []shape{
		{"s_1", 0, -1, 0, -1, -1, ""},
		{"s_1", 1, 1, 1, 0.05, 0.05, ""},
		{"s_1", -1, 2, -1, 0, 0.05, "answer"},
		{"s_1", 2, 3, 2, 0.5, 0.5, ""},
		{"s_1", -1, 4, -1, -1, 0.5, "llm"},
		{"s_1", 3, 5, 3, 0.45, 0.5, ""},
		{"s_2", 0, -1, 0, -1, -1, ""},
		{"s_2", 1, 1, 1, 0.4, 0.4, ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
	if e := rows[2].Error; e == nil || *e != "large: no code in the answer" || rows[2].TS == nil || rows[0].TS != nil {
		t.Errorf("failed step row %+v, root %+v", rows[2], rows[0])
	}
	if len(m.Context) != 0 {
		t.Errorf("context %v without a time filter", m.Context)
	}
}

// --since keeps whole trees: a search with a step in range comes from its
// root, the steps before the range included (and counted in the manifest),
// so no node is an orphan or at the wrong depth; a search with no step in
// range is left out. --until cuts a tree after its last step in range.
func TestSearchTreesSinceKeepsWholeTrees(t *testing.T) {
	dir := searchLog(t)
	out, m := runExport(t, dir, Request{Format: "search-trees", Since: "2026-11-30"})
	rows := read[treeRow](t, filepath.Join(out, "search_trees.parquet"))
	nodes := map[int64]bool{}
	var got []shape
	for _, r := range rows {
		got = append(got, shapeOf(r))
		if r.Node != nil {
			nodes[*r.Node] = true
		}
	}
	for _, r := range rows {
		if r.Parent != nil && !nodes[*r.Parent] {
			t.Errorf("row %+v: its parent is in no row", shapeOf(r))
		}
	}
	if len(got) != 6 || got[0].search != "s_1" || got[3] != (shape{"s_1", 2, 3, 2, 0.5, 0.5, ""}) || got[5].depth != 3 {
		t.Fatalf("rows %v: want s_1 whole, from its root", got)
	}
	if m.Context[ContextEarlierSteps] != 2 || m.Files["search_trees.parquet"] != 6 {
		t.Errorf("manifest context %v, files %v; want the 2 steps before --since counted", m.Context, m.Files)
	}
	out, m = runExport(t, dir, Request{Format: "search-trees", Until: "2026-11-29"})
	got = nil
	for _, r := range read[treeRow](t, filepath.Join(out, "search_trees.parquet")) {
		got = append(got, shapeOf(r))
	}
	if len(got) != 5 || got[2].seq != 2 || got[4] != (shape{"s_2", 1, 1, 1, 0.4, 0.4, ""}) || len(m.Context) != 0 {
		t.Fatalf("--until day 1: rows %v, context %v; want s_1 to step 2 and s_2", got, m.Context)
	}
}

// A step whose answer held no code is a trajectories row (the model's
// answer, reward 0, no status, its error); a step that judged no answer (an
// LLM error) is in none, and counted.
func TestTrajectoriesHoldAnswersWithoutCode(t *testing.T) {
	out, m := runExport(t, searchLog(t), Request{Format: "trajectories"})
	rows := read[trajRow](t, filepath.Join(out, "trajectories.parquet"))
	var failed []trajRow
	for _, r := range rows {
		if r.EvalID == nil {
			failed = append(failed, r)
		}
	}
	if len(rows) != 5 || len(failed) != 1 {
		t.Fatalf("%d rows, %d without an evaluation: %+v", len(rows), len(failed), rows)
	}
	f := failed[0]
	if f.Source != "search" || f.Trajectory != "s_1" || f.Step != 2 || *f.Parent != 1 || f.Node != nil || f.Status != nil ||
		f.Reward == nil || *f.Reward != 0 || f.Error == nil || *f.Error != "large: no code in the answer" ||
		f.Completion == nil || *f.Completion != "I would fuse the add." || f.PromptSource != PromptSent || len(f.Prompt) != 1 {
		t.Errorf("failed step row %+v", f)
	}
	if m.Skipped[SkipFailedStep+event.FailureLLM] != 1 || m.Skipped[SkipNoPrompt] != 0 {
		t.Errorf("skipped %v: want the LLM error counted", m.Skipped)
	}
	if _, m := runExport(t, searchLog(t), Request{Format: "trajectories", Status: []string{"correct"}}); m.Skipped[SkipFailedStep+event.FailureLLM] != 0 || m.Skipped[SkipNoPrompt] != 0 {
		t.Errorf("--status correct: skipped %v; a failed step has no status, so matches no status filter", m.Skipped)
	}
}
