package export

import (
	"path/filepath"
	"reflect"
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
	}
}

func skillEvent(version int64, ts time.Time) SkillEvent {
	return SkillEvent{EventID: SkillEventID("sk-1", version), Time: ts, Reason: "created", Skill: Skill{
		SkillID: "sk-1", Version: version, Rule: "You cannot index a tensor with a Python list.",
		ErrorSignature: "TypeError: x", FailingCode: "code", ExampleEvalIDs: []string{"e1"},
		FirstSeen: ts, LastSeen: ts, Hits: 3, Status: SkillActive, SourceSearchID: "s_1",
	}}
}

func TestSearchStepRowRoundTrip(t *testing.T) {
	full := SearchStepRow(searchStepEvent(1, testTime))
	if full.Status == nil || *full.Status != "correct" || full.Node == nil || full.EvalID == nil || !full.Correct || *full.Speedup != 1.31 || *full.RuntimeMedianMS != 0.91 || full.TS.Location() != time.UTC {
		t.Fatalf("verdict columns: %+v", full)
	}
	failed := SearchStepRow(event.SearchStep{EventID: "s_1.2", Time: testTime, SearchID: "s_1", Seq: 2, Action: "large", Error: "large: no code in the answer"})
	if failed.Status != nil || failed.Node != nil || failed.EvalID != nil || failed.Speedup != nil || failed.HackFlags == nil || failed.SkillIDs == nil || failed.PromptMessages == nil {
		t.Fatalf("failed step: %+v", failed)
	}
	rows := []SearchStep{full, failed}
	if got := roundTrip(t, rows); !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rows)
	}
	sk := []Skill{SkillRow(skillEvent(1, testTime)), SkillRow(SkillEvent{Time: testTime, Skill: Skill{SkillID: "sk-2"}})}
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
	ok := LLMCallRow(event.LLMCall{EventID: "c_1", Time: testTime, CallID: "c_1", SearchID: "s_1", Purpose: "large",
		Model: "m", Messages: []event.PromptMessage{{Role: "user", Content: "write"}}, Completion: &text, PromptTokens: 10,
		CompletionTokens: 5, LatencyMS: 12.5, FinishReason: "stop"})
	failed := LLMCallRow(event.LLMCall{EventID: "c_2", Time: testTime, CallID: "c_2", Purpose: "skill.extract", Error: "timeout"})
	if *ok.SearchID != "s_1" || *ok.Completion != text || ok.Error != nil || *ok.FinishReason != "stop" {
		t.Errorf("ok row %+v", ok)
	}
	if failed.SearchID != nil || failed.Completion != nil || *failed.Error != "timeout" || failed.Messages == nil {
		t.Errorf("failed row %+v", failed)
	}
	rows := []LLMCall{ok, failed}
	if got := roundTrip(t, rows); !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, rows)
	}
}
