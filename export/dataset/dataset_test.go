package dataset

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/tasks"
)

const (
	ok   = eval.StatusCorrect
	bad  = eval.StatusIncorrect
	herr = eval.StatusHarnessError
)

func sampleLog(t *testing.T) string {
	dir := t.TempDir()
	writeLog(t, dir,
		ev{id: "e1", task: "ci/a", code: "slow", status: ok, speedup: 1.0, min: 1},
		ev{id: "e2", task: "ci/a", code: "fast", status: ok, speedup: 2.0, min: 2},
		ev{id: "e3", task: "ci/a", code: "fast", status: ok, speedup: 2.0, min: 3},               // same code, later
		ev{id: "e4", task: "ci/a", code: "fast", status: ok, speedup: 2.0, min: 4, cached: true}, // a cache hit: e2's verdict
		ev{id: "e5", task: "ci/a", code: "wrong", status: bad, min: 5},
		ev{id: "e6", task: "ci/a", code: "broken", status: herr, min: 6},
		ev{id: "e7", task: "level2/b", code: "tie1", status: ok, speedup: 1.5, min: 7, noSource: true},
		ev{id: "e8", task: "level2/b", code: "tie2", status: ok, speedup: 1.5, min: 8},
		ev{id: "e9", task: "api/x", code: "orphan", status: ok, speedup: 3, min: 9, noSource: true}, // srcA's hash: prompt from the suite
	)
	return dir
}

func TestSFT(t *testing.T) {
	dir := sampleLog(t)
	out, m := runExport(t, dir, Request{Format: "sft"})
	rows := read[sftRow](t, filepath.Join(out, "sft.parquet"))
	var got []string
	for _, r := range rows {
		got = append(got, r.TaskID+":"+r.EvalID)
	}
	// api/x has srcA's hash: the suite gives it a prompt (it is that task's source).
	want := []string{"api/x:e9", "ci/a:e2", "level2/b:e7"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sft rows %v, want %v", got, want)
	}
	r := rows[1]
	if len(r.Messages) != 2 || r.Messages[0].Role != "user" || r.Messages[0].Content != tasks.Prompt(srcA) ||
		r.Messages[1].Role != "assistant" || r.Messages[1].Content != "```python\nfast\n```" || *r.Speedup != 2 {
		t.Errorf("sft row %+v", r)
	}
	if m.Files["sft.parquet"] != 3 || len(m.Skipped) != 2 || m.Skipped[SkipNoPrompt] != 0 || m.Skipped[SkipInvalid] != 1 || len(m.Sources) == 0 ||
		!strings.HasPrefix(m.Sources[0], "parquet/table=evaluations/") {
		t.Errorf("manifest %+v", m)
	}

	_, m = runExport(t, dir, Request{Format: "sft", TopK: ptr(5), Task: []string{"ci/*"}})
	if m.Files["sft.parquet"] != 2 { // fast, slow: the code of e3 and e4 (a cache hit) is fast's
		t.Errorf("top 5 of ci/*: %d rows", m.Files["sft.parquet"])
	}
}

func TestNoPromptIsCounted(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, ev{id: "e1", task: "ci/a", code: "c", status: ok, speedup: 1, noSource: true})
	out := filepath.Join(t.TempDir(), "out")
	m, err := Write(t.Context(), spec(t, Request{Format: "sft"}), Source{DataDir: dir}, out, false) // no suites
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 0 || m.Skipped[SkipNoPrompt] != 1 {
		t.Errorf("manifest %+v, want 0 rows and 1 no_prompt", m)
	}
}

func TestDPO(t *testing.T) {
	dir := sampleLog(t)
	out, m := runExport(t, dir, Request{Format: "dpo", Task: []string{"ci/a"}, MinMargin: ptr(0.5)})
	rows := read[dpoRow](t, filepath.Join(out, "dpo.parquet"))
	var got []string
	for _, r := range rows {
		got = append(got, r.ChosenEvalID+">"+r.RejectedEvalID+":"+r.RejectedStatus)
	}
	// fast beats wrong (incorrect) and slow (2.0 >= 1.5*1.0); slow beats wrong; the
	// harness error is invalid; e3 and the cache hit e4 are fast again: one candidate.
	// Taken by rank sum: (fast, wrong), (slow, wrong), (fast, slow).
	want := []string{"e2>e5:incorrect", "e1>e5:incorrect", "e2>e1:correct"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	r := rows[0]
	if r.Prompt[0].Content != tasks.Prompt(srcA) || r.Chosen[0].Role != "assistant" || r.Rejected[0].Content != "```python\nwrong\n```" {
		t.Errorf("row %+v", r)
	}
	if m.Files["dpo.parquet"] != 3 {
		t.Errorf("manifest %+v", m)
	}
	_, m = runExport(t, dir, Request{Format: "dpo", Task: []string{"ci/a"}, MinMargin: ptr(1.5), MaxPairsPerTask: ptr(1)})
	if m.Rows != 1 {
		t.Errorf("capped at 1: %d rows", m.Rows)
	}
}

// DPO pairs answers to one prompt only, and its sides are the model's own
// text where a completion was logged.
func TestDPOUsesLoggedPromptsAndCompletions(t *testing.T) {
	dir := t.TempDir()
	turn2 := []event.PromptMessage{{Role: "user", Content: tasks.Prompt(srcA)}, {Role: "assistant", Content: "first try"},
		{Role: "user", Content: "mismatch"}}
	same := []event.PromptMessage{{Role: "user", Content: tasks.Prompt(srcA)}} // the task's own prompt, logged
	writeLog(t, dir,
		ev{id: "g1", task: "ci/a", code: "fast", status: ok, speedup: 2, min: 1, completion: "Here:\n```python\nfast\n```", prompt: same},
		ev{id: "b1", task: "ci/a", code: "wrong", status: bad, min: 2, completion: "I think this works\n```python\nwrong\n```"},
		ev{id: "g2", task: "ci/a", code: "fixed", status: ok, speedup: 1.5, min: 3, prompt: turn2},
		ev{id: "b2", task: "ci/a", code: "still wrong", status: bad, min: 4, prompt: turn2},
	)
	out, _ := runExport(t, dir, Request{Format: "dpo"})
	rows := read[dpoRow](t, filepath.Join(out, "dpo.parquet"))
	got := map[string]dpoRow{}
	for _, r := range rows {
		got[r.ChosenEvalID+">"+r.RejectedEvalID] = r
	}
	if len(rows) != 2 || got["g1>b1"].TaskID != "ci/a" || got["g2>b2"].TaskID != "ci/a" {
		t.Fatalf("pairs %v: answers to different prompts were paired, or a pair is missing", slices.Collect(maps.Keys(got)))
	}
	if r := got["g1>b1"]; r.Rejected[0].Content != "I think this works\n```python\nwrong\n```" ||
		r.Chosen[0].Content != "Here:\n```python\nfast\n```" || len(r.Prompt) != 1 {
		t.Errorf("turn-1 pair %+v", r)
	}
	if r := got["g2>b2"]; len(r.Prompt) != 3 || r.Prompt[2].Content != "mismatch" || r.Rejected[0].Content != "```python\nstill wrong\n```" {
		t.Errorf("turn-2 pair %+v", r)
	}
	// SFT: the best kernels of the task, under the task's own prompt, as code.
	out, _ = runExport(t, dir, Request{Format: "sft", TopK: ptr(2)})
	sft := read[sftRow](t, filepath.Join(out, "sft.parquet"))
	if len(sft) != 2 || sft[0].EvalID != "g1" || sft[1].EvalID != "g2" {
		t.Fatalf("sft rows %+v", sft)
	}
	for _, r := range sft {
		if len(r.Messages) != 2 || r.Messages[0].Content != tasks.Prompt(srcA) || !strings.HasPrefix(r.Messages[1].Content, "```python\n") {
			t.Errorf("sft row %+v", r)
		}
	}
}

func TestVerl(t *testing.T) {
	var ts []tasks.Task
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ts = append(ts, tasks.New("level1/"+n, srcA+"# "+n+"\n", tasks.OriginSuite, t0))
	}
	out := filepath.Join(t.TempDir(), "v")
	m, err := Write(t.Context(), spec(t, Request{Format: "verl"}), Source{Tasks: ts, TaskFiles: map[string]string{"level1/a": "datasets/level1/a.py"}}, out, false)
	if err != nil {
		t.Fatal(err)
	}
	train := read[verlRow](t, filepath.Join(out, "train.parquet"))
	test := read[verlRow](t, filepath.Join(out, "test.parquet"))
	if len(test) != 1 || len(train) != 4 || m.Files["train.parquet"] != 4 || m.Files["test.parquet"] != 1 {
		t.Fatalf("train %d test %d, manifest %+v", len(train), len(test), m.Files)
	}
	r := train[0]
	prompt := []Message{{Role: "user", Content: tasks.Prompt(r.ExtraInfo.taskSource(ts))}}
	want := verlRow{DataSource: "kernelgate/level1", Ability: VerlAbility, Prompt: prompt,
		RewardModel: rewardModel{Style: "rule", GroundTruth: r.ExtraInfo.TaskID},
		ExtraInfo: verlExtra{Split: "train", Index: 0, TaskID: r.ExtraInfo.TaskID, Suite: "level1", Level: 1,
			Name: strings.TrimPrefix(r.ExtraInfo.TaskID, "level1/"), Prompt: prompt},
		TaskID: r.ExtraInfo.TaskID}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("row\n got %+v\nwant %+v", r, want)
	}
	if test[0].ExtraInfo.Split != "test" || test[0].ExtraInfo.Index != 0 {
		t.Errorf("test row %+v", test[0].ExtraInfo)
	}
	// Deterministic: the same split again.
	out2 := filepath.Join(t.TempDir(), "v")
	if _, err := Write(t.Context(), spec(t, Request{Format: "verl"}), Source{Tasks: ts}, out2, false); err != nil {
		t.Fatal(err)
	}
	if again := read[verlRow](t, filepath.Join(out2, "test.parquet")); again[0].ExtraInfo.TaskID != test[0].ExtraInfo.TaskID {
		t.Errorf("split changed: %s then %s", test[0].ExtraInfo.TaskID, again[0].ExtraInfo.TaskID)
	}
	if m.Sources[0] != "datasets/level1/a.py" || m.Sources[1] != "task:level1/b" {
		t.Errorf("sources %v", m.Sources)
	}
}

func (x verlExtra) taskSource(ts []tasks.Task) string {
	for _, t := range ts {
		if t.ID == x.TaskID {
			return t.Source
		}
	}
	return ""
}

func TestSkills(t *testing.T) {
	dir := t.TempDir()
	rows := []export.Skill{
		{SkillID: "s2", Version: 1, Rule: "You cannot call tl.dot on int8.", ExampleEvalIDs: []string{"e1"}, FirstSeen: t0, LastSeen: t0, Hits: 3, Status: export.SkillActive, Aliases: []string{}},
		{SkillID: "s1", Version: 2, Rule: "You cannot index out of bounds.", ExampleEvalIDs: []string{}, FirstSeen: t0, LastSeen: t0.Add(48 * time.Hour), Status: export.SkillRetired, RetiredReason: ptr("fixed in triton 3.7"), Aliases: []string{}},
	}
	part := filepath.Join(dir, LogDir, "table=skills", "date=2026-11-29")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeParquet(filepath.Join(part, "part-s-1-1.parquet"), rows, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(part, ".part-s-2-2.parquet.tmp"), []byte("half written"), 0o644) // never read
	out, m := runExport(t, dir, Request{Format: "skills"})
	got := read[export.Skill](t, filepath.Join(out, "skills.parquet"))
	if len(got) != 2 || got[0].SkillID != "s1" || !reflect.DeepEqual(got[1], rows[0]) || m.Files["skills.parquet"] != 2 {
		t.Fatalf("skills %+v manifest %+v", got, m)
	}
	_, m = runExport(t, dir, Request{Format: "skills", Status: []string{"active"}, Until: "2026-11-30"})
	if m.Rows != 1 {
		t.Errorf("active until 11-30: %d rows", m.Rows)
	}
}

func TestFiltersAndEmpty(t *testing.T) {
	dir := sampleLog(t)
	for _, c := range []struct {
		r    Request
		rows int64
	}{
		{Request{Format: "arrow", Status: []string{"incorrect"}}, 1},
		{Request{Format: "arrow", MinSpeedup: ptr(1.9)}, 4},                                         // e2 e3 e4 e9
		{Request{Format: "arrow", Since: "2026-11-29T10:05:00Z", Until: "2026-11-29T10:07:00Z"}, 1}, // e5 (e6 is invalid)
		{Request{Format: "arrow", Since: "2026-11-29T10:05:00Z", Until: "2026-11-29T10:07:00Z", IncludeInvalid: true}, 2},
		{Request{Format: "arrow", Until: "2026-11-29"}, 8},
		{Request{Format: "arrow", Since: "2026-11-30"}, 0},
		{Request{Format: "arrow", Task: []string{"level2/*", "api/x"}}, 3},
		{Request{Format: "sft", Task: []string{"nope/*"}}, 0},
		{Request{Format: "dpo", Since: "2027-01-01"}, 0},
	} {
		out, m := runExport(t, dir, c.r)
		if got := m.Files["evaluations.arrow"] + m.Files["sft.parquet"] + m.Files["dpo.parquet"]; got != c.rows {
			t.Errorf("%+v: %d rows, want %d (%+v)", c.r, got, c.rows, m.Files)
		}
		for name := range m.Files { // empty or not, every file is there and readable
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				t.Error(err)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		r     Request
		field string
	}{
		{Request{Format: "csv"}, "format"},
		{Request{Format: "sft", Since: "yesterday"}, "since"},
		{Request{Format: "sft", Since: "2026-11-30", Until: "2026-11-29T00:00:00Z"}, "until"},
		{Request{Format: "sft", Task: []string{"level2/["}}, "task"},
		{Request{Format: "sft", Status: []string{"great"}}, "status"},
		{Request{Format: "sft", MinSpeedup: ptr(-1.0)}, "min_speedup"},
		{Request{Format: "verl", TestFraction: ptr(1.0)}, "test_fraction"},
		{Request{Format: "sft", TopK: ptr(0)}, "top_k"},
		{Request{Format: "dpo", MaxPairsPerTask: ptr(0)}, "max_pairs_per_task"},
		{Request{Format: "verl", Status: []string{"correct"}}, "status"},
		{Request{Format: "skills", Task: []string{"ci/*"}}, "task"},
	} {
		_, err := c.r.Parse()
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: %v, want an input error on %s", c.r, err, c.field)
		}
	}

	data := sampleLog(t)
	full := filepath.Join(t.TempDir(), "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("x"), 0o644)
	for _, force := range []bool{false, true} { // force replaces earlier exports only
		_, err := Write(t.Context(), spec(t, Request{Format: "sft"}), Source{DataDir: data}, full, force)
		if !errors.Is(err, ErrOutNotEmpty) && !strings.Contains(err.Error(), "not empty") {
			t.Errorf("force=%v: %v", force, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "keep.txt")); string(b) != "x" {
		t.Error("non-empty out was touched")
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err := Write(t.Context(), spec(t, Request{Format: "sft"}), Source{DataDir: t.TempDir()}, out, false)
	if !errors.Is(err, ErrNoLog) {
		t.Errorf("no log: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out written after an error: %v", err)
	}
	// An earlier export is replaced with force.
	_, err = Write(t.Context(), spec(t, Request{Format: "sft"}), Source{DataDir: data}, out, false)
	if err == nil {
		_, err = Write(t.Context(), spec(t, Request{Format: "dpo"}), Source{DataDir: data}, out, true)
	}
	if _, serr := os.Stat(filepath.Join(out, "sft.parquet")); err != nil || serr == nil {
		t.Errorf("force over an export: %v, sft.parquet still there: %v", err, serr == nil)
	}
}

// A file written before task_source (and most other columns) existed still
// reads: missing columns are zero, and the prompt comes from the suites.
func TestOldLogFile(t *testing.T) {
	type oldRow struct {
		EventID  string    `parquet:"event_id"`
		TS       time.Time `parquet:"ts,timestamp(millisecond)"`
		EvalID   string    `parquet:"eval_id"`
		TaskID   string    `parquet:"task_id"`
		TaskHash string    `parquet:"task_hash"`
		CodeHash string    `parquet:"code_hash"`
		Code     string    `parquet:"code"`
		Status   string    `parquet:"status"`
		Correct  bool      `parquet:"correct"`
		Speedup  *float64  `parquet:"speedup,optional"`
	}
	dir := t.TempDir()
	part := filepath.Join(dir, LogDir, "table=evaluations", "date=2026-11-29")
	os.MkdirAll(part, 0o755)
	rows := []oldRow{{EventID: "o1", TS: t0, EvalID: "o1", TaskID: "ci/a", TaskHash: eval.HashSource(srcA), CodeHash: "h", Code: "old", Status: "correct", Correct: true, Speedup: ptr(1.2)}}
	if err := writeParquet(filepath.Join(part, "part-old-1-1.parquet"), rows, nil); err != nil {
		t.Fatal(err)
	}
	out, m := runExport(t, dir, Request{Format: "sft"})
	got := read[sftRow](t, filepath.Join(out, "sft.parquet"))
	if len(got) != 1 || got[0].Messages[0].Content != tasks.Prompt(srcA) || m.Skipped[SkipNoPrompt] != 0 {
		t.Fatalf("sft from an old file: %+v, manifest %+v", got, m)
	}
	if _, m := runExport(t, dir, Request{Format: "arrow"}); m.Files["evaluations.arrow"] != 1 {
		t.Errorf("arrow from an old file: %+v", m.Files)
	}
}
