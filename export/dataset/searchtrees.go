package dataset

import (
	"cmp"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/export"
)

// treeRow is one row of a search tree: the root (node 0, the task), a row
// per node a step made, and a row per step that made none (node null, with
// its error).
type treeRow struct {
	SearchID string     `parquet:"search_id"`
	TaskID   string     `parquet:"task_id"`
	Node     *int64     `parquet:"node,optional"`                      // 0: the root; null: a failed step
	Parent   *int64     `parquet:"parent,optional"`                    // null for the root
	Seq      *int64     `parquet:"seq,optional"`                       // the step; null for the root
	TS       *time.Time `parquet:"ts,optional,timestamp(millisecond)"` // when the step was logged; null for the root
	Action   string     `parquet:"action"`                             // "root" for the root
	EvalID   *string    `parquet:"eval_id,optional"`
	Status   *string    `parquet:"status,optional"`
	Speedup  *float64   `parquet:"speedup,optional"`
	// Reward is null for the root (the task is no candidate) and for a
	// failed step that judged no answer of the model's (search_steps.reward).
	Reward *float64 `parquet:"reward,optional"`
	// BestReward is the best reward of the search up to and including this
	// row, in step order (null until a step has one): its best-so-far curve.
	BestReward  *float64 `parquet:"best_reward,optional"`
	BestSpeedup *float64 `parquet:"best_speedup,optional"` // the search's best so far, after this step
	Duplicate   bool     `parquet:"duplicate"`
	// Depth is 0 for the root; null for a failed step, and for a node whose
	// parent is in no row (a log that lost the step that made it).
	Depth   *int64  `parquet:"depth,optional"`
	Error   *string `parquet:"error,optional"`
	Failure *string `parquet:"failure,optional"`
}

// ContextEarlierSteps counts the search-trees rows of steps outside
// --since/--until: a tree with a step in range is exported whole, from its
// root, so no node comes out an orphan.
const ContextEarlierSteps = "earlier_steps"

// searchTrees writes search_trees.parquet from the search_steps table:
// every search with a step that matches the filters, from its root up to
// its last step in range.
func (b *build) searchTrees() error {
	f := b.spec.Filter
	var steps []export.SearchStep
	if tableExists(b.root, export.TableSearchSteps) {
		// Every date: a tree's earlier steps may be in older partitions.
		rows, files, err := readTable(b.log(), b.root, export.TableSearchSteps, Filter{}, func(r export.SearchStep) bool {
			return f.task(r.TaskID)
		})
		if err != nil {
			return err
		}
		b.logSources(files)
		steps = rows
	}
	last := map[string]int64{} // the last step in range of each search that has one
	for _, s := range steps {
		if f.time(s.TS) {
			last[s.SearchID] = max(last[s.SearchID], s.Seq)
		}
	}
	steps = slices.DeleteFunc(steps, func(s export.SearchStep) bool {
		l, ok := last[s.SearchID]
		return !ok || s.Seq > l
	})
	slices.SortStableFunc(steps, func(x, y export.SearchStep) int {
		return cmp.Or(cmp.Compare(x.SearchID, y.SearchID), cmp.Compare(x.Seq, y.Seq))
	})
	var rows []treeRow
	for i := 0; i < len(steps); {
		j := i + 1
		for j < len(steps) && steps[j].SearchID == steps[i].SearchID {
			j++
		}
		rows = append(rows, b.tree(steps[i:j])...)
		i = j
	}
	return output(b, "search_trees.parquet", rows)
}

// tree is the rows of one search's steps (in seq order): its root, then a
// row per step.
func (b *build) tree(steps []export.SearchStep) []treeRow {
	first := steps[0]
	rows := []treeRow{{SearchID: first.SearchID, TaskID: first.TaskID, Node: ptr(int64(0)), Action: "root", Depth: ptr(int64(0))}}
	depth := map[int64]int64{0: 0}
	var best *float64
	for _, s := range steps {
		if !b.spec.Filter.time(s.TS) {
			b.m.addContext(ContextEarlierSteps)
		}
		if s.Reward != nil && (best == nil || *s.Reward > *best) {
			best = ptr(*s.Reward)
		}
		r := treeRow{
			SearchID: s.SearchID, TaskID: s.TaskID, Node: s.Node, Parent: ptr(s.Parent), Seq: ptr(s.Seq), TS: ptr(s.TS),
			Action: s.Action, EvalID: s.EvalID, Status: s.Status, Speedup: s.Speedup, Reward: s.Reward,
			BestSpeedup: s.BestSpeedup, Duplicate: s.Duplicate, Error: s.Error, Failure: s.Failure,
		}
		if best != nil {
			r.BestReward = ptr(*best)
		}
		if d, ok := depth[s.Parent]; ok && s.Node != nil {
			depth[*s.Node] = d + 1
			r.Depth = ptr(d + 1)
		}
		rows = append(rows, r)
	}
	return rows
}
