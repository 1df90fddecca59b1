package llm

import (
	"maps"
	"sync"
	"time"
)

// Stats are cumulative counts for a set of calls. Tokens come from the
// server's usage field, or are estimated (len/4) where it had none.
type Stats struct {
	Calls     int // Complete calls finished, successful or not
	Failures  int // calls that returned an error other than cancellation
	Canceled  int // calls the caller's ctx ended
	Attempts  int // HTTP requests sent, retries included
	Truncated int // completions cut at max tokens (finish_reason "length")
	Estimated int // completions whose token counts are estimates

	PromptTokens, CompletionTokens int
	// Latency sums each call's wall time in Complete: queueing for a
	// concurrency slot, every attempt and every backoff.
	Latency time.Duration
}

// Totals are the client's cumulative Stats, overall and per Request.Purpose
// ("" counts as "unnamed").
type Totals struct {
	All       Stats
	ByPurpose map[string]Stats
}

type accounts struct {
	mu  sync.Mutex
	all Stats
	by  map[string]Stats
}

// add folds one finished call into the totals.
func (a *accounts) add(purpose string, s Stats) {
	if purpose == "" {
		purpose = "unnamed"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by == nil {
		a.by = map[string]Stats{}
	}
	a.all = a.all.plus(s)
	a.by[purpose] = a.by[purpose].plus(s)
}

func (a *accounts) totals() Totals {
	a.mu.Lock()
	defer a.mu.Unlock()
	by := maps.Clone(a.by)
	if by == nil {
		by = map[string]Stats{}
	}
	return Totals{All: a.all, ByPurpose: by}
}

func (s Stats) plus(o Stats) Stats {
	s.Calls += o.Calls
	s.Failures += o.Failures
	s.Canceled += o.Canceled
	s.Attempts += o.Attempts
	s.Truncated += o.Truncated
	s.Estimated += o.Estimated
	s.PromptTokens += o.PromptTokens
	s.CompletionTokens += o.CompletionTokens
	s.Latency += o.Latency
	return s
}
