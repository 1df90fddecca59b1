package dataset

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/event"
)

func promptOf(text string) []event.PromptMessage {
	return []event.PromptMessage{{Role: "user", Content: text}}
}

// A cache hit is the completion's verdict: request B's correct answer,
// answered from the cache of request A's, pairs with B's wrong answer under
// B's prompt. Dropping cached rows left B with no chosen side.
func TestDPOKeepsACachedPair(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir,
		ev{id: "a-0", task: "ci/a", code: "k", status: ok, speedup: 1.5, min: 1, batch: "a", prompt: promptOf("A"),
			completion: "Here:\n```python\nk\n```"},
		ev{id: "b-0", task: "ci/a", code: "k", status: ok, speedup: 1.5, min: 2, batch: "b", prompt: promptOf("B"), cached: true,
			completion: "Other words.\n```python\nk\n```"},
		ev{id: "b-1", task: "ci/a", code: "w", status: bad, min: 3, batch: "b", prompt: promptOf("B"),
			completion: "```python\nw\n```"},
	)
	out, m := runExport(t, dir, Request{Format: "dpo"})
	rows := read[dpoRow](t, filepath.Join(out, "dpo.parquet"))
	if len(rows) != 1 || rows[0].ChosenEvalID != "b-0" || rows[0].RejectedEvalID != "b-1" || rows[0].Prompt[0].Content != "B" ||
		rows[0].Chosen[0].Content != "Other words.\n```python\nk\n```" {
		t.Fatalf("pairs %+v, want b-0 > b-1 under B's prompt", rows)
	}
	if _, ok := m.Skipped["cached"]; ok || m.Skipped[SkipInvalid] != 0 {
		t.Errorf("skipped %v: a cache hit is no reason to skip", m.Skipped)
	}
	// SFT: the cache hit is the same code as a-0: one row for the task.
	out, _ = runExport(t, dir, Request{Format: "sft", TopK: ptr(3)})
	if sft := read[sftRow](t, filepath.Join(out, "sft.parquet")); len(sft) != 1 || sft[0].EvalID != "a-0" {
		t.Errorf("sft %+v, want a-0 once", sft)
	}
}

// A side of a pair is what the model said: the same completion twice (a
// retry, a cache hit) is one candidate; the same code in other words is two.
func TestDPODedupesWhatWasSaid(t *testing.T) {
	same := "Here:\n```python\nk\n```"
	dir := t.TempDir()
	writeLog(t, dir,
		ev{id: "c1", task: "ci/a", code: "k", status: ok, speedup: 1.5, min: 1, completion: same},
		ev{id: "c2", task: "ci/a", code: "k", status: ok, speedup: 1.5, min: 2, completion: same, cached: true},
		ev{id: "c3", task: "ci/a", code: "k", status: ok, speedup: 1.5, min: 3, completion: "In other words:\n```python\nk\n```", cached: true},
		ev{id: "w1", task: "ci/a", code: "w", status: bad, min: 4, completion: "```python\nw\n```"},
		ev{id: "w2", task: "ci/a", code: "w", status: bad, min: 5, completion: "```python\nw\n```", cached: true},
	)
	out, _ := runExport(t, dir, Request{Format: "dpo"})
	var got []string
	for _, r := range read[dpoRow](t, filepath.Join(out, "dpo.parquet")) {
		got = append(got, r.ChosenEvalID+">"+r.RejectedEvalID)
	}
	slices.Sort(got)
	if want := []string{"c1>w1", "c3>w1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
}

// --max-pairs-per-task bounds a task's pairs whatever its number of
// prompts, and each prompt's best pair comes before any prompt's second.
func TestDPOMaxPairsIsPerTask(t *testing.T) {
	dir := t.TempDir()
	var evs []ev
	for i, p := range []string{"P", "Q"} {
		evs = append(evs,
			ev{id: p + "good", task: "ci/a", code: p + "good", status: ok, speedup: 2, min: 10*i + 1, prompt: promptOf(p)},
			ev{id: p + "bad1", task: "ci/a", code: p + "bad1", status: bad, min: 10*i + 2, prompt: promptOf(p)},
			ev{id: p + "bad2", task: "ci/a", code: p + "bad2", status: bad, min: 10*i + 3, prompt: promptOf(p)},
		)
	}
	writeLog(t, dir, evs...)
	out, m := runExport(t, dir, Request{Format: "dpo", MaxPairsPerTask: ptr(3)})
	var got []string
	for _, r := range read[dpoRow](t, filepath.Join(out, "dpo.parquet")) {
		got = append(got, r.ChosenEvalID+">"+r.RejectedEvalID)
	}
	if want := []string{"Pgood>Pbad1", "Qgood>Qbad1", "Pgood>Pbad2"}; !reflect.DeepEqual(got, want) || m.Rows != 3 {
		t.Errorf("pairs %v (%d rows), want %v", got, m.Rows, want)
	}
}
