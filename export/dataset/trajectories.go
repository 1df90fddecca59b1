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
	EvalID     *string   `parquet:"eval_id,optional"` // null: a failed search step, which evaluated nothing
	Prompt     []Message `parquet:"prompt,list"`      // logged, else the task's own (prompt_source says which)
	// Completion is the model's text as logged; null where the caller sent
	// code alone (no completion was ever written): Code is what was judged.
	Completion *string  `parquet:"completion,optional"`
	Reward     *float64 `parquet:"reward,optional"`
	Status     *string  `parquet:"status,optional"` // null: no verdict (a failed step: error says why)
	Error      *string  `parquet:"error,optional"`  // a failed search step's error
	Speedup    *float64 `parquet:"speedup,optional"`
	// Done: the step ends its trajectory. A reward is a one-step episode
	// (always done); an episode's last turn; an ended search's last step.
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
	var failed []export.SearchStep
	if tableExists(b.root, export.TableSearchSteps) {
		rows, files, err := readTable(b.log(), b.root, export.TableSearchSteps, Filter{}, func(export.SearchStep) bool { return true })
		if err != nil {
			return err
		}
		b.logSources(files)
		for _, r := range rows {
			if r.EvalID != nil {
				search[*r.EvalID] = r
			} else {
				failed = append(failed, r) // evaluated nothing: no evaluations row names it
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
			TaskID: e.TaskID, EvalID: ptr(e.EvalID), Prompt: prompt, PromptSource: from, Completion: e.Completion, Code: e.Code,
			Reward: e.Reward, Status: ptr(e.Status), Speedup: e.Speedup}
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
	rows = append(rows, b.failedStepRows(failed)...)
	if err := b.endSearches(rows); err != nil {
		return err
	}
	slices.SortStableFunc(rows, func(x, y trajRow) int {
		return cmp.Or(cmp.Compare(x.Source, y.Source), cmp.Compare(x.Trajectory, y.Trajectory), cmp.Compare(x.Step, y.Step))
	})
	return output(b, "trajectories.parquet", rows)
}

// endSearches marks done the last row of each search that has ended (its
// newest searches row is in a state other than running): the step that ended
// its trajectory. A search still running has no done row yet.
func (b *build) endSearches(rows []trajRow) error {
	if !tableExists(b.root, export.TableSearches) {
		return nil
	}
	states, files, err := readTable(b.log(), b.root, export.TableSearches, Filter{}, func(export.Search) bool { return true })
	if err != nil {
		return err
	}
	b.logSources(files)
	latest := map[string]export.Search{}
	for _, st := range states {
		if cur, ok := latest[st.SearchID]; !ok || !st.TS.Before(cur.TS) {
			latest[st.SearchID] = st
		}
	}
	last := map[string]int{} // search id -> index in rows of its last step
	for i, r := range rows {
		if j, ok := last[r.Trajectory]; r.Source == "search" && (!ok || r.Step > rows[j].Step) {
			last[r.Trajectory] = i
		}
	}
	for id, i := range last {
		if st, ok := latest[id]; ok && st.State != searchRunning {
			rows[i].Done = true
		}
	}
	return nil
}

// searchRunning is a searches row's state while the search runs (rollout/runner).
const searchRunning = "running"

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
