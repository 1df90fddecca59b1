package dispatch

import (
	"sync"
	"time"
)

// Looking for lost items reads the whole queue, so a batch that moves is
// not checked: only one read without progress for Stall, then again each
// Stall while it stays put.

// progress is, per batch read lately, its done count and since when.
type progress struct {
	mu      sync.Mutex
	batches map[string]moved
}

type moved struct {
	done  int
	since time.Time // when done last changed, or the batch was last checked
}

// progressKept bounds the batches remembered; past it those not read for
// a while are forgotten (they are checked at once when read again).
const progressKept = 4096

func (s *Service) stall() time.Duration {
	if s.Stall <= 0 {
		return 30 * time.Second
	}
	return s.Stall
}

// Stalled reports whether batch id, read now with done items of total
// answered and created at created, has made no progress for Stall, and then
// counts this as its check: the next comes a Stall later. A batch read for
// the first time counts from its creation.
func (s *Service) Stalled(id string, done, total int, created time.Time) bool {
	if done >= total {
		return false
	}
	now := time.Now()
	p := &s.progress
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.batches == nil {
		p.batches = map[string]moved{}
	}
	m, ok := p.batches[id]
	switch {
	case !ok:
		m = moved{done: done, since: created}
	case m.done != done:
		m = moved{done: done, since: now}
	}
	stalled := now.Sub(m.since) >= s.stall()
	if stalled {
		m.since = now
	}
	if len(p.batches) >= progressKept {
		for k, o := range p.batches {
			if now.Sub(o.since) > 10*s.stall() {
				delete(p.batches, k)
			}
		}
	}
	p.batches[id] = m
	return stalled
}
