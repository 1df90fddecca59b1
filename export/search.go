package export

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
)

// TableSearchSteps is the search's log of steps. The skills table is
// defined in skills.go; its event is SkillEvent.
const TableSearchSteps = "search_steps"

// SkillEvent is what the skill memory's OnChange publishes on events.skill,
// one per rule version. EventID is SkillEventID(skill id, version). Unlike
// the other events (package event) its body is the skills row itself, so it
// lives beside that row.
type SkillEvent struct {
	EventID string    `json:"event_id"`
	Time    time.Time `json:"ts"`
	Reason  string    `json:"reason"` // created, hit, merged, retired:...
	Skill   Skill     `json:"skill"`
}

// SkillEventID is a skill version's event id.
func SkillEventID(skillID string, version int64) string {
	return fmt.Sprintf("skill.%s.%d", skillID, version)
}

// SearchStep is one row of the search_steps table: the step and its
// verdict's main columns (the full verdict is the evaluations table's job;
// eval_id joins them when the evaluator logs there). What a step did not
// make is null: a failed step's node, eval_id and verdict columns; a tune's
// prompt; a step without an answer's completion and code.
type SearchStep struct {
	EventID         string                `parquet:"event_id"` // <search_id>.<seq>: llm_calls.step_id
	TS              time.Time             `parquet:"ts,timestamp(millisecond)"`
	SearchID        string                `parquet:"search_id"`
	Seq             int64                 `parquet:"seq"`
	TaskID          string                `parquet:"task_id"`
	Node            *int64                `parquet:"node,optional"` // null: a failed step made no node
	Parent          int64                 `parquet:"parent"`
	Action          string                `parquet:"action"`
	Policy          string                `parquet:"policy"`
	PromptMessages  []event.PromptMessage `parquet:"prompt_messages,list"`
	PromptVersion   *string               `parquet:"prompt_version,optional"` // null: no prompt (a tune)
	Completion      *string               `parquet:"completion,optional"`     // null: the model gave none
	Code            *string               `parquet:"code,optional"`           // null: no code
	TokensIn        int64                 `parquet:"tokens_in"`
	TokensOut       int64                 `parquet:"tokens_out"`
	LatencyMS       float64               `parquet:"latency_ms"`       // the LLM calls'
	EvalMS          float64               `parquet:"eval_ms"`          // the harness's
	StepMS          float64               `parquet:"step_ms"`          // the whole step: less the two above, the search's own time
	Model           *string               `parquet:"model,optional"`   // null: no call answered
	EvalID          *string               `parquet:"eval_id,optional"` // null when nothing was evaluated
	Status          *string               `parquet:"status,optional"`  // null when no verdict
	Compiled        *bool                 `parquet:"compiled,optional"`
	Correct         *bool                 `parquet:"correct,optional"`
	Speedup         *float64              `parquet:"speedup,optional"`
	RuntimeMedianMS *float64              `parquet:"runtime_median_ms,optional"`
	ErrorSignature  *string               `parquet:"error_signature,optional"`
	Feedback        *string               `parquet:"feedback,optional"`
	HackFlags       []string              `parquet:"hack_flags,list"`
	// Reward: the node's; for a failed step, 0 when the model's answer held
	// no usable code (failure "answer", scored as an invalid submission),
	// else null (no judgement of the model).
	Reward        *float64 `parquet:"reward,optional"`
	BestSpeedup   *float64 `parquet:"best_speedup,optional"`
	BestNode      *int64   `parquet:"best_node,optional"` // null: no node yet
	SkillIDs      []string `parquet:"skill_ids,list"`
	SkillVersions []int64  `parquet:"skill_versions,list"` // the version of each of skill_ids the prompt held
	Duplicate     bool     `parquet:"duplicate"`
	Error         *string  `parquet:"error,optional"`   // null: the step made a node
	Failure       *string  `parquet:"failure,optional"` // what a failed step failed at (event.Failure*)
	// CallIDs: the step's LLM calls (llm_calls.call_id), in order; a
	// small step's reviser and tuner, a failed call included.
	CallIDs []string `parquet:"call_ids,list"`
}

// SearchStepRow flattens ev into a search_steps row.
func SearchStepRow(ev event.SearchStep) SearchStep {
	r := SearchStep{
		EventID: ev.EventID, TS: rowTime(ev.Time), SearchID: ev.SearchID, Seq: int64(ev.Seq), TaskID: ev.TaskID,
		Parent: int64(ev.Parent), Action: ev.Action, Policy: ev.Policy,
		PromptMessages: slices.Clone(ev.Prompt), PromptVersion: nullEmpty(ev.PromptVersion),
		Completion: nullEmpty(ev.Completion), Code: nullEmpty(ev.Code),
		TokensIn: int64(ev.TokensIn), TokensOut: int64(ev.TokensOut), LatencyMS: ev.LatencyMS,
		EvalMS: ev.EvalMS, StepMS: ev.StepMS, Model: nullEmpty(ev.Model), BestSpeedup: ev.BestSpeedup,
		SkillIDs: nonNil(slices.Clone(ev.SkillIDs)), SkillVersions: int64s(ev.SkillVersions),
		Duplicate: ev.Duplicate, Error: nullEmpty(ev.Error), Failure: nullEmpty(ev.Failure), HackFlags: []string{},
		CallIDs: nonNil(slices.Clone(ev.CallIDs)),
	}
	if r.PromptMessages == nil {
		r.PromptMessages = []event.PromptMessage{}
	}
	if ev.Node > 0 {
		r.Node = ptr(int64(ev.Node))
	}
	if ev.BestNode > 0 {
		r.BestNode = ptr(int64(ev.BestNode))
	}
	if ev.EvalID != "" {
		r.EvalID = ptr(ev.EvalID)
	}
	if ev.Node > 0 || ev.Failure == event.FailureAnswer {
		r.Reward = ptr(ev.Reward)
	}
	if v := ev.Verdict; v != nil {
		r.Status, r.Compiled, r.Correct = ptr(string(v.Status)), ptr(v.Compiled), ptr(v.Correct)
		if v.Speedup != nil {
			r.Speedup = ptr(*v.Speedup)
		}
		if v.Runtime != nil {
			r.RuntimeMedianMS = ptr(v.Runtime.MedianMS)
		}
		r.ErrorSignature, r.Feedback = nullEmpty(v.ErrorSignature), nullEmpty(v.Feedback)
		r.HackFlags = nonNil(slices.Clone(v.HackFlags))
	}
	return r
}

// Normalize gives a row read from a file of schema 1.4 or before the
// meaning 1.5 writes: null, not "" or 0, where nothing is known (no code, no
// verdict, no best node; the reward of a failed step that does not say it
// was the model's answer). A 1.5 row is left as it is.
func (r *SearchStep) Normalize() {
	for _, p := range []**string{&r.PromptVersion, &r.Completion, &r.Code, &r.Model, &r.ErrorSignature, &r.Feedback, &r.Error, &r.Failure} {
		if *p != nil && **p == "" {
			*p = nil
		}
	}
	if r.Status == nil {
		r.Compiled, r.Correct = nil, nil
	}
	if r.BestNode != nil && *r.BestNode == 0 {
		r.BestNode = nil
	}
	if r.Node == nil && (r.Failure == nil || *r.Failure != event.FailureAnswer) {
		r.Reward = nil
	}
}

// nullEmpty is s, or null when it is empty: in these tables "" only ever
// meant "not known" (no error, no prompt, no model), and a reader should
// not need NULLIF to say so.
func nullEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SkillRow is the skills row of a skill event, its lists never null.
func SkillRow(ev SkillEvent) Skill {
	r := ev.Skill
	r.EventID = ev.EventID // the sink's restart dedup reads event_id
	r.Reason = ev.Reason
	r.ExampleEvalIDs = nonNil(slices.Clone(r.ExampleEvalIDs))
	r.Aliases = nonNil(slices.Clone(r.Aliases))
	// A zero time would be written as year 1754 (int64 millis overflow):
	// the event's time stands in.
	if r.FirstSeen.IsZero() {
		r.FirstSeen = ev.Time
	}
	if r.LastSeen.IsZero() {
		r.LastSeen = ev.Time
	}
	r.FirstSeen, r.LastSeen = rowTime(r.FirstSeen), rowTime(r.LastSeen)
	return r
}

func searchStepHeader(e *event.SearchStep) header {
	return header{&e.EventID, &e.Time, e.SearchID, "search_id"}
}

func skillHeader(e *SkillEvent) header {
	return header{&e.EventID, &e.Time, e.Skill.SkillID, "skill.SkillID"}
}

func searchHeader(e *event.Search) header {
	return header{&e.EventID, &e.Time, e.SearchID, "search_id"}
}

func llmCallHeader(e *event.LLMCall) header { return header{&e.EventID, &e.Time, e.CallID, "call_id"} }

// decodeAny is decode extended with the search's subjects: the sink's
// single entry point for turning an event into a row.
func decodeAny(ev bus.Event, received time.Time, log *slog.Logger) decoded {
	switch ev.Subject {
	case event.SubjectSearchStep:
		return decodeBody(ev, received, log, searchStepHeader, SearchStepRow)
	case event.SubjectSkill:
		return decodeBody(ev, received, log, skillHeader, SkillRow)
	case event.SubjectSearch:
		return decodeBody(ev, received, log, searchHeader, SearchRow)
	case event.SubjectLLMCall:
		return decodeBody(ev, received, log, llmCallHeader, LLMCallRow)
	}
	return decode(ev, received, log)
}

// skillDay is the time that dates a skills row's partition: when the
// version was made (its last_seen), else when the sink received it.
func skillDay(r Skill, received time.Time) time.Time {
	if r.LastSeen.IsZero() {
		return received
	}
	return r.LastSeen
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}
