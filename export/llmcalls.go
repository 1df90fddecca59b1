package export

import (
	"time"

	"github.com/kernelgate/kernelgate/event"
)

// The llm_calls table: every call a search or the skill memory makes to an
// LLM (propose, revise, tune, extract a rule, deduplicate rules), with its
// purpose, messages, completion, tokens and latency. A small step makes two
// calls: both are rows, though its search_steps row shows the last.
const TableLLMCalls = "llm_calls"

// LLMCall is one row of the llm_calls table.
type LLMCall struct {
	EventID          string                `parquet:"event_id"`
	TS               time.Time             `parquet:"ts,timestamp(millisecond)"`
	CallID           string                `parquet:"call_id"`
	SearchID         *string               `parquet:"search_id,optional"`
	Purpose          string                `parquet:"purpose"`
	Model            string                `parquet:"model"`
	Messages         []event.PromptMessage `parquet:"messages,list"`
	Completion       *string               `parquet:"completion,optional"`
	PromptTokens     int64                 `parquet:"prompt_tokens"`
	CompletionTokens int64                 `parquet:"completion_tokens"`
	LatencyMS        float64               `parquet:"latency_ms"`
	FinishReason     *string               `parquet:"finish_reason,optional"`
	Error            *string               `parquet:"error,optional"`
}

// LLMCallRow flattens ev into an llm_calls row.
func LLMCallRow(ev event.LLMCall) LLMCall {
	r := LLMCall{
		EventID: ev.EventID, TS: rowTime(ev.Time), CallID: ev.CallID, Purpose: ev.Purpose, Model: ev.Model,
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
	return r
}
