package runner

import (
	"context"
	"crypto/rand"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/rollout"
)

// loggedLLM logs every call of an LLM on events.llm_call (the llm_calls
// table): a search's proposals and revisions, the skill memory's rule
// extraction and deduplication. A call that cannot be logged is answered
// all the same.
type loggedLLM struct {
	inner    rollout.LLM
	bus      *bus.Bus
	searchID string     // "" for calls no single search makes (the skill memory)
	step     func() int // the seq of the step a call belongs to; nil: no step
	log      *slog.Logger
}

// LogCalls wraps llm so that each call is a row of llm_calls, under searchID
// when one search makes them.
func LogCalls(llm rollout.LLM, b *bus.Bus, searchID string, log *slog.Logger) rollout.LLM {
	return &loggedLLM{inner: llm, bus: b, searchID: searchID, log: log}
}

// logSearchCalls is LogCalls for r's search: each call's row names the step
// it is made for. A search makes one step at a time and records it after its
// calls, so that step is the one after the last recorded.
func logSearchCalls(llm rollout.LLM, b *bus.Bus, r *run, log *slog.Logger) rollout.LLM {
	return &loggedLLM{inner: llm, bus: b, searchID: r.st.SearchID, step: r.nextSeq, log: log}
}

func (l *loggedLLM) Complete(ctx context.Context, req rollout.Request) (rollout.Completion, error) {
	t0 := time.Now()
	c, err := l.inner.Complete(ctx, req)
	id := "c_" + rand.Text()
	ev := event.LLMCall{
		EventID: id, Time: t0.UTC(), CallID: id, SearchID: l.searchID, Purpose: req.Purpose, Model: c.Model,
		PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens, FinishReason: c.FinishReason,
		LatencyMS: float64(time.Since(t0).Microseconds()) / 1000,
	}
	if l.step != nil {
		ev.StepSeq = l.step()
	}
	for _, m := range req.Messages {
		ev.Messages = append(ev.Messages, event.PromptMessage{Role: m.Role, Content: m.Content})
	}
	if err != nil {
		ev.Error = err.Error()
	} else {
		text := c.Text
		ev.Completion = &text
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if merr := event.Publish(wctx, l.bus, ev); merr != nil {
		l.log.Error("LLM call not logged", "search_id", l.searchID, "purpose", req.Purpose, "err", merr)
	} else {
		c.CallID = id
	}
	return c, err
}
