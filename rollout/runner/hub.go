package runner

import (
	"context"
	"sync"
)

// subBuffer steps a subscriber may fall behind before it is dropped: a
// slow SSE client must never hold the search up.
const subBuffer = 256

// hub fans a search's steps out to its live subscribers.
type hub struct {
	mu    sync.Mutex
	last  int // the last Seq published
	subs  map[*sub]struct{}
	ended bool
}

type sub struct {
	live chan Event // closed when the search ends or the subscriber is dropped
}

// join registers a subscriber and returns the Seq up to which it must
// replay from the store; s is nil when the search has ended (replay only).
func (h *hub) join() (s *sub, last int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil, h.last
	}
	s = &sub{live: make(chan Event, subBuffer)}
	if h.subs == nil {
		h.subs = map[*sub]struct{}{}
	}
	h.subs[s] = struct{}{}
	return s, h.last
}

func (h *hub) leave(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.live)
	}
}

// publish hands ev to every subscriber without blocking; one whose buffer
// is full is dropped (its channel closes; it can subscribe again from the
// last Seq it saw).
func (h *hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = max(h.last, ev.Seq)
	for s := range h.subs {
		select {
		case s.live <- ev:
		default:
			delete(h.subs, s)
			close(s.live)
		}
	}
}

// end closes every subscriber after the last step.
func (h *hub) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = true
	for s := range h.subs {
		close(s.live)
	}
	h.subs = nil
}

// Subscribe replays the stored steps with Seq > after, then streams new
// ones until the search ends, ctx ends, or the subscriber falls too far
// behind.
func (m *Manager) Subscribe(ctx context.Context, id string, after int) (<-chan Event, error) {
	r, err := m.find(ctx, id)
	if err != nil {
		return nil, err
	}
	s, last := r.hub.join()
	out := make(chan Event)
	go func() {
		defer close(out)
		if s != nil {
			defer r.hub.leave(s)
		}
		send := func(ev Event) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for seq := after + 1; seq <= last; seq++ {
			ev, ok, err := m.store.step(ctx, id, seq)
			if err != nil {
				m.log.Warn("replay: step unreadable", "search_id", id, "seq", seq, "err", err)
				return
			}
			if ok && !send(ev) {
				return
			}
		}
		if s == nil {
			return
		}
		for ev := range s.live {
			if ev.Seq > after && !send(ev) {
				return
			}
		}
	}()
	return out, nil
}
