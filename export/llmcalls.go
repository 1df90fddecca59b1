package export

import (
	"time"

	"github.com/kernelgate/kernelgate/event"
)

// The llm_calls table: every call a search or the skill memory makes to an
// LLM (propose, revise, tune, extract a rule, deduplicate rules), with its
// purpose, messages, completion, tokens and latency. A small step makes two
// calls: both are rows, though its search_steps row shows the last; each
// names its step (step_id) and the step lists both (search_steps.call_ids).
const TableLLMCalls = "llm_calls"

// LLMCall is one row of the llm_calls table.
type LLMCall struct {
	EventID          string                `parquet:"event_id"`
	TS               time.Time             `parquet:"ts,timestamp(millisecond)"`
	CallID           string                `parquet:"call_id"`
	SearchID         *string               `parquet:"search_id,optional"`
	Purpose          string                `parquet:"purpose"`
	Model            *string               `parquet:"model,optional"` // null: the call failed before a model answered
	Messages         []event.PromptMessage `parquet:"messages,list"`
	Completion       *string               `parquet:"completion,optional"`
	PromptTokens     int64                 `parquet:"prompt_tokens"`
	CompletionTokens int64                 `parquet:"completion_tokens"`
	LatencyMS        float64               `parquet:"latency_ms"`
	FinishReason     *string               `parquet:"finish_reason,optional"`
	Error            *string               `parquet:"error,optional"`
	// The search step the call was made for (search_steps.seq, and its
	// event_id, <search_id>.<seq>); null for the skill memory's calls.
	StepSeq *int64  `parquet:"step_seq,optional"`
	StepID  *string `parquet:"step_id,optional"`
}

// Normalize gives a row read from a file of schema 1.4 or before the
// meaning 1.5 writes: a model of "" is null.
func (r *LLMCall) Normalize() {
	if r.Model != nil && *r.Model == "" {
		r.Model = nil
	}
}

// LLMCallRow flattens ev into an llm_calls row.
func LLMCallRow(ev event.LLMCall) LLMCall {
	r := LLMCall{
		EventID: ev.EventID, TS: rowTime(ev.Time), CallID: ev.CallID, Purpose: ev.Purpose, Model: nullEmpty(ev.Model),
		Messages: nonNil(ev.Messages), Completion: ev.Completion,
		PromptTokens: int64(ev.PromptTokens), CompletionTokens: int64(ev.CompletionTokens), LatencyMS: ev.LatencyMS,
	}
	if ev.SearchID != "" {
		r.SearchID = ptr(ev.SearchID)
	}
	if ev.FinishReason != "" {
		r.FinishReason = ptr(ev.FinishReason)
	}
	if ev.Error != "" {
		r.Error = ptr(ev.Error)
	}
	if ev.SearchID != "" && ev.StepSeq > 0 {
		r.StepSeq, r.StepID = ptr(int64(ev.StepSeq)), ptr(event.SearchStepID(ev.SearchID, ev.StepSeq))
	}
	return r
}
