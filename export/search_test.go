package export

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

func searchStepEvent(seq int, ts time.Time) event.SearchStep {
	v := fullVerdict()
	best := 1.31
	return event.SearchStep{
		EventID: event.SearchStepID("s_1", seq), Time: ts, SearchID: "s_1", Seq: seq, TaskID: "ci/1_add_relu",
		Node: seq, Parent: seq - 1, Action: "small", Policy: "adaexplore",
		Prompt:        []event.PromptMessage{{Role: "user", Content: "write a kernel"}},
		PromptVersion: "revise.v1+tune.v1", Completion: "```python\ncode\n```", Code: "code",
		TokensIn: 100, TokensOut: 20, LatencyMS: 12.5, Model: "m", EvalID: "s_1-1",
		Verdict: &v, Reward: 0.7, BestSpeedup: &best, BestNode: seq, SkillIDs: []string{"sk-1"},
		CallIDs: []string{fmt.Sprintf("c_%d", seq)},
	}
}

func skillEvent(version int64, ts time.Time) SkillEvent {
	return SkillEvent{EventID: SkillEventID("sk-1", version), Time: ts, Reason: "created", Skill: Skill{
		SkillID: "sk-1", Version: version, Rule: "You cannot index a tensor with a Python list.",
		ErrorSignature: "TypeError: x", FailingCode: "code", ExampleEvalIDs: []string{"e1"},
		FirstSeen: ts, LastSeen: ts, Hits: 3, Status: SkillActive, SourceSearchID: ptr("s_1"),
	}}
}

func TestSearchStepRowRoundTrip(t *testing.T) {
	full := SearchStepRow(searchStepEvent(1, testTime))
	if full.Status == nil || *full.Status != "correct" || full.Node == nil || full.EvalID == nil || full.Correct == nil || !*full.Correct ||
		*full.Speedup != 1.31 || *full.RuntimeMedianMS != 0.91 || full.TS.Location() != time.UTC || *full.Reward != 0.7 ||
		*full.Code != "code" || *full.BestNode != 1 || full.Error != nil || full.Failure != nil || !slices.Equal(full.CallIDs, []string{"c_1"}) {
		t.Fatalf("verdict columns: %+v", full)
	}
	// What a failed step did not make is null, never "" or 0; its reward is
	// 0 when the model's answer held no code, and null when the step judged
	// no answer (an LLM error).
	answer := SearchStepRow(event.SearchStep{EventID: "s_1.2", Time: testTime, SearchID: "s_1", Seq: 2, Action: "large",
		Completion: "I would fuse them.", Model: "m", Error: "large: no code in the answer", Failure: event.FailureAnswer, CallIDs: []string{"c_2"}})
	llm := SearchStepRow(event.SearchStep{EventID: "s_1.3", Time: testTime, SearchID: "s_1", Seq: 3, Action: "small", BestNode: 1,
		Error: "small.revise: llm: 503", Failure: event.FailureLLM, CallIDs: []string{"c_3"}})
	for _, failed := range []SearchStep{answer, llm} {
		if failed.Status != nil || failed.Node != nil || failed.EvalID != nil || failed.Speedup != nil || failed.Compiled != nil ||
			failed.Correct != nil || failed.ErrorSignature != nil || failed.Feedback != nil || failed.Code != nil ||
			failed.PromptVersion != nil || failed.Error == nil || failed.Failure == nil ||
			failed.HackFlags == nil || failed.SkillIDs == nil || failed.PromptMessages == nil || len(failed.CallIDs) != 1 {
			t.Errorf("failed step: %+v", failed)
		}
	}
	if answer.Reward == nil || *answer.Reward != 0 || *answer.Completion != "I would fuse them." || answer.BestNode != nil {
		t.Errorf("a code-less answer: reward %v, completion %v, best node %v", answer.Reward, answer.Completion, answer.BestNode)
	}
	if llm.Reward != nil || llm.Completion != nil || llm.Model != nil || *llm.BestNode != 1 {
		t.Errorf("an LLM error: reward %v, completion %v, model %v, best node %v", llm.Reward, llm.Completion, llm.Model, llm.BestNode)
	}
	rows := []SearchStep{full, answer, llm}
	if got := roundTrip(t, rows); !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rows)
	}
	sk := []Skill{SkillRow(skillEvent(1, testTime)), SkillRow(SkillEvent{Time: testTime, Skill: Skill{SkillID: "sk-2"}})}
	if sk[1].GPUArch != nil || sk[1].Torch != nil || sk[1].RetiredReason != nil || sk[1].SourceSearchID != nil || *sk[0].SourceSearchID != "s_1" {
		t.Errorf("skills rows: %+v", sk)
	}
	if got := roundTrip(t, sk); !reflect.DeepEqual(got, sk) {
		t.Fatalf("skills round trip:\n got %+v\nwant %+v", got, sk)
	}
}

// The search_steps schema is a contract with readers, like the others
// (rows_test.go's TestSchemaGolden; -update rewrites it).
func TestSearchStepSchemaGolden(t *testing.T) {
	checkGolden(t, "search_steps.schema.golden", parquet.SchemaOf(SearchStep{}).String()+"\n")
}

func TestHandleSearchEvents(t *testing.T) {
	root := t.TempDir()
	s := newTestSink(t, root)
	evs := []bus.Event{
		busEvent(t, event.SubjectSearchStep, event.SearchStepID("s_1", 1), searchStepEvent(1, testTime)),
		busEvent(t, event.SubjectSkill, SkillEventID("sk-1", 1), skillEvent(1, testTime)),
		busEvent(t, event.SubjectSearchStep, event.SearchStepID("s_1", 2), searchStepEvent(2, testTime)),
		busEvent(t, event.SubjectSearchStep, "bad", map[string]int{"seq": 3}), // no search id: rejected
	}
	if err := s.Handle(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	// A redelivery (the runner republishing after a restart) adds nothing.
	again := evs[:3]
	for i := range again {
		again[i].NumDelivered = 2
	}
	if err := s.Handle(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	steps := readTable[SearchStep](t, root, TableSearchSteps)
	want := []SearchStep{SearchStepRow(searchStepEvent(1, testTime)), SearchStepRow(searchStepEvent(2, testTime))}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("search_steps:\n got %+v\nwant %+v", steps, want)
	}
	sk := readTable[Skill](t, root, TableSkills)
	if len(sk) != 1 || !reflect.DeepEqual(sk[0], SkillRow(skillEvent(1, testTime))) {
		t.Fatalf("skills: %+v", sk)
	}
	if rej := readTable[Rejected](t, root, TableRejected); len(rej) != 1 || rej[0].Subject != event.SubjectSearchStep {
		t.Fatalf("rejected: %+v", rej)
	}
}

// A search_steps file of schema 1.2 (node, eval_id, status required, with 0
// and "" for a step that made no node) still reads.
func TestSchema12SearchStepsStillRead(t *testing.T) {
	type v12 struct {
		EventID string `parquet:"event_id"`
		Node    int64  `parquet:"node"`
		EvalID  string `parquet:"eval_id"`
		Status  string `parquet:"status"`
	}
	dir := t.TempDir()
	if err := writePart(dir, "old.parquet", []v12{{EventID: "a", Node: 3, EvalID: "s-3", Status: "correct"}, {EventID: "b"}}, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadRows[SearchStep](filepath.Join(dir, "old.parquet"))
	if err != nil || len(rows) != 2 || rows[0].Node == nil || *rows[0].Node != 3 || *rows[0].EvalID != "s-3" || *rows[0].Status != "correct" {
		t.Fatalf("rows %+v, %v", rows, err)
	}
}

func TestSearchesSchemaGolden(t *testing.T) {
	checkGolden(t, "searches.schema.golden", parquet.SchemaOf(Search{}).String()+"\n")
}

func TestSearchRowNullsWhatIsNotKnown(t *testing.T) {
	node, speedup := 3, 1.5
	done := SearchRow(event.Search{EventID: "s_1.done.4", Time: testTime, SearchID: "s_1", State: "done", Steps: 4,
		StepsBudget: 4, BestNode: &node, BestEvalID: "s_1-3", BestSpeedup: &speedup, Options: eval.DefaultOptions()})
	running := SearchRow(event.Search{EventID: "s_1.running.0", Time: testTime, SearchID: "s_1", State: "running"})
	if *done.BestNode != 3 || *done.BestEvalID != "s_1-3" || done.Error != nil || done.TokenBudget != nil || done.Options.Seeds == 0 {
		t.Errorf("done row %+v", done)
	}
	if running.BestNode != nil || running.BestEvalID != nil || running.BestSpeedup != nil || !running.CreatedAt.Equal(running.TS) {
		t.Errorf("running row %+v", running)
	}
	rows := []Search{done, running}
	if got := roundTrip(t, rows); !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rows)
	}
}

func TestLLMCallsSchemaGolden(t *testing.T) {
	checkGolden(t, "llm_calls.schema.golden", parquet.SchemaOf(LLMCall{}).String()+"\n")
}

func TestLLMCallRow(t *testing.T) {
	text := "```python\nx\n```"
	ok := LLMCallRow(event.LLMCall{EventID: "c_1", Time: testTime, CallID: "c_1", SearchID: "s_1", StepSeq: 3, Purpose: "large",
		Model: "m", Messages: []event.PromptMessage{{Role: "user", Content: "write"}}, Completion: &text, PromptTokens: 10,
		CompletionTokens: 5, LatencyMS: 12.5, FinishReason: "stop"})
	failed := LLMCallRow(event.LLMCall{EventID: "c_2", Time: testTime, CallID: "c_2", Purpose: "skill.extract", Error: "timeout"})
	// The key to the step is the search_steps row's event_id.
	if *ok.SearchID != "s_1" || *ok.Completion != text || ok.Error != nil || *ok.FinishReason != "stop" || *ok.Model != "m" ||
		*ok.StepSeq != 3 || *ok.StepID != event.SearchStepID("s_1", 3) || *ok.StepID != SearchStepRow(searchStepEvent(3, testTime)).EventID {
		t.Errorf("ok row %+v", ok)
	}
	if failed.SearchID != nil || failed.Completion != nil || *failed.Error != "timeout" || failed.Messages == nil || failed.Model != nil ||
		failed.StepSeq != nil || failed.StepID != nil {
		t.Errorf("failed row %+v", failed)
	}
	rows := []LLMCall{ok, failed}
	if got := roundTrip(t, rows); !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rows)
	}
}

// searchStep14 is a search_steps row as schema 1.4 wrote it: "" and 0 where
// 1.5 writes null, and no failure or call_ids.
type searchStep14 struct {
	EventID        string    `parquet:"event_id"`
	TS             time.Time `parquet:"ts,timestamp(millisecond)"`
	SearchID       string    `parquet:"search_id"`
	Seq            int64     `parquet:"seq"`
	Node           *int64    `parquet:"node,optional"`
	Parent         int64     `parquet:"parent"`
	PromptVersion  string    `parquet:"prompt_version"`
	Completion     string    `parquet:"completion"`
	Code           string    `parquet:"code"`
	Model          string    `parquet:"model"`
	Status         *string   `parquet:"status,optional"`
	Compiled       bool      `parquet:"compiled"`
	Correct        bool      `parquet:"correct"`
	ErrorSignature string    `parquet:"error_signature"`
	Feedback       string    `parquet:"feedback"`
	Reward         float64   `parquet:"reward"`
	BestNode       int64     `parquet:"best_node"`
	Error          string    `parquet:"error"`
}

// llmCall14 is an llm_calls row as schema 1.4 wrote it: model required, no
// step keys.
type llmCall14 struct {
	EventID  string    `parquet:"event_id"`
	TS       time.Time `parquet:"ts,timestamp(millisecond)"`
	CallID   string    `parquet:"call_id"`
	SearchID *string   `parquet:"search_id,optional"`
	Purpose  string    `parquet:"purpose"`
	Model    string    `parquet:"model"`
}

// Files of schema 1.4 still read into the 1.5 rows: a value becomes a
// non-null one, a column 1.4 lacks reads as null or empty.
func TestSchema14SearchFilesStillRead(t *testing.T) {
	dir := t.TempDir()
	node, correct := int64(1), "correct"
	steps := []searchStep14{
		{EventID: "s_1.1", TS: testTime, SearchID: "s_1", Seq: 1, Node: &node, PromptVersion: "large:1", Completion: "```python\nx\n```",
			Code: "x", Model: "m", Status: &correct, Compiled: true, Correct: true, Reward: 0.5, BestNode: 1},
		{EventID: "s_1.2", TS: testTime, SearchID: "s_1", Seq: 2, Parent: 1, Model: "m", Error: "small.tune: no edits in the answer", BestNode: 1},
	}
	if err := writePart(dir, "steps.parquet", steps, map[string]string{MetaSchemaVersion: "1.4"}); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadRows[SearchStep](filepath.Join(dir, "steps.parquet"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	made, failed := rows[0], rows[1]
	if *made.Node != 1 || *made.Code != "x" || !*made.Correct || *made.Reward != 0.5 || *made.BestNode != 1 || *made.PromptVersion != "large:1" ||
		made.Failure != nil || made.CallIDs == nil {
		t.Errorf("a 1.4 step that made a node: %+v", made)
	}
	if failed.Node != nil || *failed.Error != "small.tune: no edits in the answer" || failed.Failure != nil || failed.Parent != 1 {
		t.Errorf("a 1.4 failed step: %+v", failed)
	}
	// An export brings them to 1.5's meaning: what 1.4 wrote as "" or 0 for
	// not known is null.
	failed.Normalize()
	if failed.Code != nil || failed.Completion != nil || failed.PromptVersion != nil || failed.ErrorSignature != nil ||
		failed.Compiled != nil || failed.Correct != nil || failed.Reward != nil || *failed.BestNode != 1 || *failed.Model != "m" {
		t.Errorf("a 1.4 failed step, normalised: %+v", failed)
	}
	if made.Normalize(); *made.Reward != 0.5 || *made.Code != "x" || !*made.Compiled {
		t.Errorf("a 1.4 step that made a node, normalised: %+v", made)
	}
	search := "s_1"
	calls := []llmCall14{{EventID: "c_1", TS: testTime, CallID: "c_1", SearchID: &search, Purpose: "large", Model: "m"}}
	if err := writePart(dir, "calls.parquet", calls, map[string]string{MetaSchemaVersion: "1.4"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRows[LLMCall](filepath.Join(dir, "calls.parquet"))
	if err != nil || len(got) != 1 || *got[0].Model != "m" || *got[0].SearchID != "s_1" || got[0].StepSeq != nil || got[0].StepID != nil {
		t.Fatalf("1.4 llm_calls rows %+v, %v", got, err)
	}
}
