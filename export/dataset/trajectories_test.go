package dataset

import (
	"time"

	"path/filepath"
	"testing"

	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/tasks"
)

// mixedLog logs a reward batch (sampleLog), a two-turn episode and a search
// of three steps (one failed) with their evaluations, through the real sink.
func mixedLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeLog(t, dir,
		ev{id: "b_1-00000", task: "ci/a", code: "x", status: ok, speedup: 1.2, min: 1, completion: "```python\nx\n```", prompt: []event.PromptMessage{{Role: "user", Content: "p"}}, batch: "b_1"},
		ev{id: "ep_1-1", task: "ci/a", code: "bad", status: bad, min: 2},
		ev{id: "ep_1-2", task: "ci/a", code: "good", status: ok, speedup: 1.1, min: 3},
		ev{id: "s_1-1", task: "ci/a", code: "n1", status: ok, speedup: 1.0, min: 4},
		ev{id: "s_1-2", task: "ci/a", code: "n2", status: ok, speedup: 2.0, min: 5},
	)
	two := 2.0
	logEvents(t, dir, "w2",
		logged{event.SubjectEpisodeStep, "ep_1-t1", event.EpisodeStep{EventID: "ep_1-t1", Time: t0, EpisodeID: "ep_1", Turn: 1, TaskID: "ci/a", EvalID: "ep_1-1", Status: "incorrect"}},
		logged{event.SubjectEpisodeStep, "ep_1-t2", event.EpisodeStep{EventID: "ep_1-t2", Time: t0, EpisodeID: "ep_1", Turn: 2, TaskID: "ci/a", EvalID: "ep_1-2", Status: "correct", Done: true, DoneReason: "solved"}},
		logged{event.SubjectSearchStep, "s_1.1", event.SearchStep{EventID: "s_1.1", Time: t0, SearchID: "s_1", Seq: 1, TaskID: "ci/a", Action: "large", Node: 1, Parent: 0, EvalID: "s_1-1"}},
		logged{event.SubjectSearchStep, "s_1.2", event.SearchStep{EventID: "s_1.2", Time: t0, SearchID: "s_1", Seq: 2, TaskID: "ci/a", Action: "small", Error: "no code"}},
		logged{event.SubjectSearchStep, "s_1.3", event.SearchStep{EventID: "s_1.3", Time: t0, SearchID: "s_1", Seq: 3, TaskID: "ci/a", Action: "small", Node: 2, Parent: 1, EvalID: "s_1-2", BestSpeedup: &two}},
	)
	return dir
}

func TestTrajectories(t *testing.T) {
	out, m := runExport(t, mixedLog(t), Request{Format: "trajectories"})
	rows := read[trajRow](t, filepath.Join(out, "trajectories.parquet"))
	got := map[string]trajRow{}
	for _, r := range rows {
		if r.EvalID != nil {
			got[*r.EvalID] = r
		}
	}
	if len(rows) != 5 || m.Files["trajectories.parquet"] != 5 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	if r := got["b_1-00000"]; r.Source != "reward" || r.Trajectory != "b_1" || r.Action != "sample" || r.Prompt[0].Content != "p" ||
		r.PromptSource != PromptSent || r.Completion == nil || *r.Completion != "```python\nx\n```" || r.Code != "x" ||
		r.Status == nil || *r.Status != "correct" || !r.Done {
		t.Errorf("reward row %+v", r)
	}
	if r := got["ep_1-2"]; r.Source != "episode" || r.Trajectory != "ep_1" || r.Step != 2 || r.Parent == nil || *r.Parent != 1 || !r.Done {
		t.Errorf("episode row %+v", r)
	}
	// Logged from code alone: no completion, and the task's prompt, said so.
	if r := got["ep_1-1"]; r.Parent != nil || r.Done || r.Completion != nil || r.Code != "bad" ||
		r.PromptSource != PromptTask || r.Prompt[0].Content != tasks.Prompt(srcA) {
		t.Errorf("episode turn 1 %+v", r)
	}
	if r := got["s_1-2"]; r.Source != "search" || r.Trajectory != "s_1" || r.Step != 3 || r.Action != "small" ||
		*r.Parent != 1 || *r.Node != 2 || *r.Speedup != 2.0 || r.Done {
		t.Errorf("search row %+v: a running search has no done row", r)
	}
}

// An ended search's last step is done; its earlier ones are not.
func TestTrajectoriesEndAnEndedSearch(t *testing.T) {
	dir := mixedLog(t)
	logEvents(t, dir, "w3",
		logged{event.SubjectSearch, "s_1.running.0", event.Search{EventID: "s_1.running.0", Time: t0, SearchID: "s_1", TaskID: "ci/a", State: "running"}},
		logged{event.SubjectSearch, "s_1.done.3", event.Search{EventID: "s_1.done.3", Time: t0.Add(time.Minute), SearchID: "s_1", TaskID: "ci/a", State: "done"}},
	)
	out, _ := runExport(t, dir, Request{Format: "trajectories"})
	done := map[int64]bool{}
	for _, r := range read[trajRow](t, filepath.Join(out, "trajectories.parquet")) {
		if r.Source == "search" {
			done[r.Step] = r.Done
		}
	}
	if !done[3] || done[1] {
		t.Errorf("search rows' done by step %v: want the last (3) only", done)
	}
}

func TestSearchTreesRefuseAStatus(t *testing.T) {
	if _, err := (Request{Format: "search-trees", Status: []string{"correct"}}).Parse(); err == nil {
		t.Error("--status on search-trees was accepted")
	}
}

// A row says where its prompt came from, and one whose prompt is not known
// at all is kept with prompt_source "none", not dropped.
func TestTrajectoryPromptSource(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir,
		ev{id: "r-00000", task: "ci/a", code: "a", status: ok, speedup: 1, min: 1, batch: "r", prompt: []event.PromptMessage{{Role: "user", Content: "mine"}}},
		ev{id: "r-00001", task: "ci/a", code: "b", status: bad, min: 2, batch: "r", completion: "words\n```python\nb\n```"},
		ev{id: "r-00002", task: "zz/gone", code: "c", status: bad, min: 3, batch: "r", noSource: true},
	)
	out := filepath.Join(t.TempDir(), "out")
	m, err := Write(t.Context(), spec(t, Request{Format: "trajectories"}), Source{DataDir: dir}, out, false) // no suites
	if err != nil {
		t.Fatal(err)
	}
	rows := read[trajRow](t, filepath.Join(out, "trajectories.parquet"))
	want := map[string]string{"r-00000": PromptSent, "r-00001": PromptTask, "r-00002": PromptNone}
	if len(rows) != 3 || m.Skipped[SkipNoPrompt] != 0 {
		t.Fatalf("rows %+v, skipped %v", rows, m.Skipped)
	}
	for _, r := range rows {
		if r.EvalID == nil || r.PromptSource != want[*r.EvalID] || !r.Done || (r.PromptSource == PromptNone) != (len(r.Prompt) == 0) {
			t.Errorf("%v: prompt_source %q done %v prompt %v", r.EvalID, r.PromptSource, r.Done, r.Prompt)
		}
	}
	if r := rows[1]; r.Completion == nil || *r.Completion != "words\n```python\nb\n```" || rows[0].Completion != nil {
		t.Errorf("completions %v %v", rows[0].Completion, r.Completion)
	}
}
