package gateway

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
)

// fakeSearches is a hand-written runner.Service: tests script each search's
// steps (step), end it (end), and watch its subscriptions. Start refuses a
// request whose reference is "BAD" (ErrBadRequest, quoting the request's
// API key, as a careless runner might) and fails on "FAIL".
type fakeSearches struct {
	mu       sync.Mutex
	searches map[string]*fakeSearch
	started  []runner.Request
	subs     int           // subscriptions whose goroutine is still running
	listErr  error         // List fails with it when set
	changed  chan struct{} // closed and replaced on every change
	next     int
}

type fakeSearch struct {
	status runner.Status
	events []runner.Event
	ended  bool
}

func newFakeSearches() *fakeSearches {
	return &fakeSearches{searches: map[string]*fakeSearch{}, changed: make(chan struct{})}
}

// notifyLocked wakes every subscription.
func (f *fakeSearches) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeSearches) Start(_ context.Context, req runner.Request) (runner.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.TaskID == "ci/nope" {
		return runner.Status{}, fmt.Errorf("%w: unknown task_id %q", runner.ErrTaskNotFound, req.TaskID)
	}
	switch req.Reference {
	case "BAD":
		return runner.Status{}, fmt.Errorf("%w: cannot reach %s with key %s", runner.ErrBadRequest, req.LLM.BaseURL, req.LLM.APIKey)
	case "FAIL":
		return runner.Status{}, fmt.Errorf("runner: store down (key %s)", req.LLM.APIKey)
	}
	f.started = append(f.started, req)
	f.next++
	// A second apart, so that the list's newest-first order is start order.
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(f.next) * time.Second)
	st := runner.Status{
		SearchID: fmt.Sprintf("s_%d", f.next), TaskID: req.TaskID, Policy: "adaexplore", State: runner.StateRunning,
		StepsBudget: req.Steps, Actions: map[string]int{}, Nodes: []runner.NodeSummary{}, CreatedAt: now, UpdatedAt: now,
	}
	f.searches[st.SearchID] = &fakeSearch{status: st}
	return st, nil
}

func (f *fakeSearches) Get(_ context.Context, id string) (runner.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.searches[id]
	if !ok {
		return runner.Status{}, fmt.Errorf("runner.Get %s: %w", id, runner.ErrNotFound)
	}
	return s.status, nil
}

func (f *fakeSearches) Cancel(_ context.Context, id string) (runner.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.searches[id]
	if !ok {
		return runner.Status{}, fmt.Errorf("runner.Cancel %s: %w", id, runner.ErrNotFound)
	}
	if !s.ended {
		s.status.State, s.ended = runner.StateCancelled, true
		f.notifyLocked()
	}
	return s.status, nil
}

func (f *fakeSearches) List(_ context.Context, q runner.ListQuery) ([]runner.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	all := make([]runner.Status, 0, len(f.searches))
	for _, s := range f.searches {
		st := s.status
		st.Actions = maps.Clone(st.Actions) // step writes it after the lock is released
		all = append(all, st)
	}
	return q.Select(all), nil
}

// Subscribe replays the steps after seq after, then follows new ones until
// the search ends or ctx ends.
func (f *fakeSearches) Subscribe(ctx context.Context, id string, after int) (<-chan runner.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.searches[id]; !ok {
		return nil, fmt.Errorf("runner.Subscribe %s: %w", id, runner.ErrNotFound)
	}
	f.subs++
	ch := make(chan runner.Event)
	go func() {
		defer func() {
			f.mu.Lock()
			f.subs--
			f.mu.Unlock()
			close(ch)
		}()
		sent := after
		for {
			f.mu.Lock()
			s, wake := f.searches[id], f.changed
			var todo []runner.Event
			for _, ev := range s.events {
				if ev.Seq > sent {
					todo = append(todo, ev)
				}
			}
			ended := s.ended
			f.mu.Unlock()
			for _, ev := range todo {
				select {
				case ch <- ev:
					sent = ev.Seq
				case <-ctx.Done():
					return
				}
			}
			if ended {
				return
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

// step appends a step to search id (its seq is the next one).
func (f *fakeSearches) step(id string, st rollout.Step) runner.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.searches[id]
	st.SearchID = id
	ev := runner.Event{Seq: len(s.events) + 1, Step: st}
	s.events = append(s.events, ev)
	s.status.Steps++
	s.status.Actions[st.Action]++
	if st.Node > 0 {
		s.status.Nodes = append(s.status.Nodes, runner.NodeSummary{Node: st.Node, Parent: st.Parent, Action: st.Action, Status: string(st.Verdict.Status), Reward: st.Reward})
	}
	f.notifyLocked()
	return ev
}

// end ends search id with state.
func (f *fakeSearches) end(id, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.searches[id]
	s.status.State, s.ended = state, true
	f.notifyLocked()
}

func (f *fakeSearches) subscriptions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.subs
}
