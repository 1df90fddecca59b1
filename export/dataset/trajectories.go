package dataset

import (
	"cmp"
	"slices"

	"github.com/kernelgate/kernelgate/export"
)

// trajRow is one offline-RL tuple: what the model was asked, what it
// answered, what that earned, and where it sits in its trajectory (a search
// tree, an episode, or a reward batch: one step each).
type trajRow struct {
	Source     string    `parquet:"source"`          // search, episode or reward
	Trajectory string    `parquet:"trajectory"`      // search_id, episode_id or batch_id
	Step       int64     `parquet:"step"`            // search seq, episode turn, item index
	Parent     *int64    `parquet:"parent,optional"` // search: the parent node (0: the task); episode: the turn before
	Node       *int64    `parquet:"node,optional"`   // search: the node this step made
	Action     string    `parquet:"action"`          // search: large, small, tune, ...; episode: turn; reward: sample
	TaskID     string    `parquet:"task_id"`
	EvalID     string    `parquet:"eval_id"`
	Prompt     []Message `parquet:"prompt,list"` // logged, else the task's own (prompt_source says which)
	// Completion is the model's text as logged; null where the caller sent
	// code alone (no completion was ever written): Code is what was judged.
	Completion *string  `parquet:"completion,optional"`
	Reward     *float64 `parquet:"reward,optional"`
	Status     string   `parquet:"status"`
	Speedup    *float64 `parquet:"speedup,optional"`
	// Done: the step ends its trajectory. A reward is a one-step episode
	// (always done); an episode's last turn.
	Done bool `parquet:"done"`
	// PromptSource says where Prompt came from: "sent" (the caller gave it,
	// or the episode's or search's own conversation), "task" (not sent:
	// filled in from the task's prompt, tasks.Prompt), "none" (neither is
	// known: Prompt is empty).
	PromptSource string `parquet:"prompt_source"`
	Code         string `parquet:"code"`
}

// Where a trajectory row's prompt came from.
const (
	PromptSent = "sent"
	PromptTask = "task"
	PromptNone = "none"
)

// trajectories writes trajectories.parquet: every evaluation the model's
// text produced (cached answers included: they were rewards it got), placed
// in its search, episode or reward batch by the search_steps and
// episode_steps rows that name it. A row whose prompt is not known is kept
// with an empty one and prompt_source "none".
func (b *build) trajectories() error {
	evals, files, err := readTable(b.log(), b.root, export.TableEvaluations, b.spec.Filter, b.keepEvaluation)
	if err != nil {
		return err
	}
	b.logSources(files)
	search := map[string]export.SearchStep{}
	if tableExists(b.root, export.TableSearchSteps) {
		rows, files, err := readTable(b.log(), b.root, export.TableSearchSteps, Filter{}, func(export.SearchStep) bool { return true })
		if err != nil {
			return err
		}
		b.logSources(files)
		for _, r := range rows {
			if r.EvalID != nil {
				search[*r.EvalID] = r
			}
		}
	}
	episode := map[string]export.EpisodeStep{}
	if tableExists(b.root, export.TableEpisodeSteps) {
		rows, files, err := readTable(b.log(), b.root, export.TableEpisodeSteps, Filter{}, func(export.EpisodeStep) bool { return true })
		if err != nil {
			return err
		}
		b.logSources(files)
		for _, r := range rows {
			if r.EvalID != "" {
				episode[r.EvalID] = r
			}
		}
	}
	srcs := newSources(b.src.Tasks)
	var rows []trajRow
	for _, e := range evals {
		prompt, from := loggedPrompt(e), PromptSent
		if prompt == nil {
			prompt, from = []Message{}, PromptNone
			if src, ok := srcs.of(e); ok {
				prompt, from = userPrompt(src), PromptTask
			}
		}
		r := trajRow{Source: "reward", Trajectory: e.BatchID, Step: evalIndex(e.EvalID), Action: "sample",
			TaskID: e.TaskID, EvalID: e.EvalID, Prompt: prompt, PromptSource: from, Completion: e.Completion, Code: e.Code,
			Reward: e.Reward, Status: e.Status, Speedup: e.Speedup}
		if s, ok := search[e.EvalID]; ok {
			r.Source, r.Trajectory, r.Step, r.Action = "search", s.SearchID, s.Seq, s.Action
			r.Parent, r.Node = ptr(s.Parent), s.Node
		} else if ep, ok := episode[e.EvalID]; ok {
			r.Source, r.Trajectory, r.Step, r.Action, r.Done = "episode", ep.EpisodeID, ep.Turn, "turn", ep.Done
			if ep.Turn > 1 {
				r.Parent = ptr(ep.Turn - 1)
			}
		} else {
			r.Done = true // a reward is a one-step episode
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(x, y trajRow) int {
		return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Trajectory, y.Trajectory), cmp.Compare(x.Step, y.Step))
	})
	return output(b, "trajectories.parquet", rows)
}

// evalIndex is item i of a batch's eval id (<batch>-<5 digits>), else 0.
func evalIndex(id string) int64 {
	var n int64
	if len(id) < 6 || id[len(id)-6] != '-' {
		return 0
	}
	for _, c := range id[len(id)-5:] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// treeRow is one node of a search tree: the root (node 0, the task) and a
// row per node a step made.
type treeRow struct {
	SearchID    string   `parquet:"search_id"`
	TaskID      string   `parquet:"task_id"`
	Node        int64    `parquet:"node"`
	Parent      *int64   `parquet:"parent,optional"` // null for the root
	Seq         *int64   `parquet:"seq,optional"`    // the step that made it; null for the root
	Action      string   `parquet:"action"`          // "root" for the root
	EvalID      *string  `parquet:"eval_id,optional"`
	Status      *string  `parquet:"status,optional"`
	Speedup     *float64 `parquet:"speedup,optional"`
	Reward      float64  `parquet:"reward"`
	BestSpeedup *float64 `parquet:"best_speedup,optional"` // the search's best so far, after this step
	Duplicate   bool     `parquet:"duplicate"`
	Depth       int64    `parquet:"depth"`
}

// searchTrees writes search_trees.parquet from the search_steps table.
func (b *build) searchTrees() error {
	var steps []export.SearchStep
	if tableExists(b.root, export.TableSearchSteps) {
		rows, files, err := readTable(b.log(), b.root, export.TableSearchSteps, b.spec.Filter, func(r export.SearchStep) bool {
			return b.spec.Filter.time(r.TS) && b.spec.Filter.task(r.TaskID)
		})
		if err != nil {
			return err
		}
		b.logSources(files)
		steps = rows
	}
	slices.SortStableFunc(steps, func(x, y export.SearchStep) int {
		return cmp.Or(cmp.Compare(x.SearchID, y.SearchID), cmp.Compare(x.Seq, y.Seq))
	})
	var rows []treeRow
	depth := map[int64]int64{}
	for i, s := range steps {
		if i == 0 || steps[i-1].SearchID != s.SearchID {
			rows = append(rows, treeRow{SearchID: s.SearchID, TaskID: s.TaskID, Action: "root"})
			clear(depth)
		}
		if s.Node == nil {
			continue // a failed step made no node
		}
		depth[*s.Node] = depth[s.Parent] + 1
		rows = append(rows, treeRow{
			SearchID: s.SearchID, TaskID: s.TaskID, Node: *s.Node, Parent: ptr(s.Parent), Seq: ptr(s.Seq), Action: s.Action,
			EvalID: s.EvalID, Status: s.Status, Speedup: s.Speedup, Reward: s.Reward, BestSpeedup: s.BestSpeedup,
			Duplicate: s.Duplicate, Depth: depth[*s.Node],
		})
	}
	return output(b, "search_trees.parquet", rows)
}
