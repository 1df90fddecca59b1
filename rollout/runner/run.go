package runner

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelgate/kernelgate/rollout"
)

// run is one search known to this process: running, or ended (loaded
// from the store for Get and Subscribe).
type run struct {
	req      Request // API key cleared: this is what is stored
	cancel   context.CancelFunc
	userStop atomic.Bool   // Cancel was called (not a shutdown)
	done     chan struct{} // closed once the search has ended here
	hub      hub
	cfg      rollout.Config // the search as launched (set before it runs)
	model    string
	source   string // the task's source, stored when req names it by id

	mu      sync.Mutex
	st      Status
	seq     int
	lastErr string // the latest failed step's reason
}

func newRun(st Status, req Request) *run {
	req.LLM.APIKey = "" // never stored, logged or echoed
	return &run{req: req, st: st, done: make(chan struct{}), cancel: func() {}}
}

// loadedRun is a stored search: its status rebuilt from its steps. It is
// not running here (done is closed) until a resume relaunches it.
func loadedRun(rec record, steps []Event) *run {
	r := newRun(rec.Status, rec.Request)
	r.source = rec.TaskSource
	r.st.Nodes, r.st.Best = []NodeSummary{}, nil
	r.st.Steps, r.st.TokensIn, r.st.TokensOut, r.st.Actions = 0, 0, 0, map[string]int{}
	for _, ev := range steps {
		r.apply(ev)
	}
	r.st.UpdatedAt = rec.Status.UpdatedAt
	r.hub.last = r.seq
	close(r.done)
	r.hub.end()
	return r
}

func (r *run) status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Actions = maps.Clone(r.st.Actions)
	st.Nodes = slices.Clone(r.st.Nodes)
	if st.Best != nil {
		b := *st.Best
		st.Best = &b
	}
	return st
}

// record is the stored form of the run.
func (r *run) record() record {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.Nodes = nil // rebuilt from the steps: keeps the record far below 1 MiB
	return record{Request: r.req, Status: st, Seq: r.seq, TaskSource: r.source}
}

func (r *run) userCancel() {
	r.userStop.Store(true)
	r.cancel()
}

func (r *run) stop() { r.cancel() }

// SkippedTune reports the engine's free step (a tune with nothing to
// tune): it does not use up a step (rollout.Step.countsTowardSteps), so
// counters and progress bars skip it.
func SkippedTune(s rollout.Step) bool {
	return s.Action == rollout.ActionTune && s.Node == 0 && strings.HasPrefix(s.Error, "tune: no tunable")
}

// nextSeq is the seq the step being made will get.
func (r *run) nextSeq() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq + 1
}

// apply adds one step to the status; the caller holds no lock.
func (r *run) apply(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &r.st
	r.seq = max(r.seq, ev.Seq)
	if ev.Error != "" && !SkippedTune(ev.Step) {
		r.lastErr = ev.Error
	}
	st.TokensIn += ev.TokensIn
	st.TokensOut += ev.TokensOut
	if !SkippedTune(ev.Step) {
		st.Steps++
		st.Actions[ev.Action]++
	}
	if ev.Node > 0 && ev.Verdict != nil {
		st.Nodes = append(st.Nodes, NodeSummary{Node: ev.Node, Parent: ev.Parent, Action: ev.Action,
			Status: string(ev.Verdict.Status), Reward: ev.Reward, Speedup: ev.Verdict.Speedup, Duplicate: ev.Duplicate})
		// The best only changes when a node is added, to that node; it is
		// reported once a kernel compiles.
		if ev.BestNode == ev.Node && ev.Verdict.Compiled {
			v := *ev.Verdict
			st.Best = &Best{Node: ev.Node, Reward: ev.Reward, Verdict: &v, Code: ev.Code}
		}
	}
	st.UpdatedAt = time.Now().UTC()
}

// finish records how the search ended: the engine's counters are the
// authority on steps, tokens and actions.
func (r *run) finish(res rollout.Result, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &r.st
	st.State = res.Status
	st.Steps, st.TokensIn, st.TokensOut = res.Steps, res.TokensIn, res.TokensOut
	st.Actions = maps.Clone(res.Actions)
	if st.Actions == nil {
		st.Actions = map[string]int{}
	}
	st.Error = reason
	st.UpdatedAt = time.Now().UTC()
}

func (r *run) fail(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.State, r.st.Error, r.st.UpdatedAt = StateFailed, reason, time.Now().UTC()
}

// failReason explains a failed search: the engine stops after several LLM
// failures in a row, and the last one says why (unreachable, 401, ...).
func (r *run) failReason(state string) string {
	if state != StateFailed {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return "the LLM failed repeatedly; last error: " + r.lastErr
}
