package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/tasks"
)

// Tasks resolves a request's task id; *tasks.Registry is one.
type Tasks interface {
	Get(ctx context.Context, id string) (tasks.Task, error)
}

// Deps are what a Manager runs searches with. Skills and Log may be nil.
type Deps struct {
	Bus    *bus.Bus
	Eval   rollout.Evaluator
	Skills rollout.SkillMemory
	Tasks  Tasks
	// LLM holds the defaults of every search's client (endpoint, model,
	// key, and the client's timeouts and retries); a request's non-empty
	// LLMSettings override the first five.
	LLM     llm.Config
	GPUName string
	Log     *slog.Logger
}

// Manager is the Service: it runs searches in goroutines, keeps their
// state and steps in bus KV buckets (so they survive a restart) and logs
// every step on the EVENTS stream (the search_steps table).
type Manager struct {
	deps  Deps
	log   *slog.Logger
	store *store

	mu      sync.Mutex
	runs    map[string]*run
	closing bool
	wg      sync.WaitGroup
}

var _ Service = (*Manager)(nil)

// NewManager opens the manager's buckets.
func NewManager(ctx context.Context, deps Deps) (*Manager, error) {
	if deps.Bus == nil || deps.Eval == nil || deps.Tasks == nil {
		return nil, errors.New("runner.NewManager: Bus, Eval and Tasks are required")
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	st, err := openStore(ctx, deps.Bus)
	if err != nil {
		return nil, err
	}
	return &Manager{deps: deps, log: deps.Log.With("component", "runner"), store: st, runs: map[string]*run{}}, nil
}

// Start validates req and runs the search in the background.
func (m *Manager) Start(ctx context.Context, req Request) (Status, error) {
	p, err := m.plan(ctx, req)
	if err != nil {
		return Status{}, err
	}
	p.cfg.SearchID = newSearchID()
	now := time.Now().UTC()
	st := Status{SearchID: p.cfg.SearchID, TaskID: p.cfg.TaskID, Policy: p.cfg.Policy, State: StateRunning,
		StepsBudget: p.cfg.Steps, Actions: map[string]int{}, Nodes: []NodeSummary{}, CreatedAt: now, UpdatedAt: now}
	r := newRun(st, req)
	if req.Reference == "" {
		r.source = p.cfg.TaskSource
	}
	if err := m.store.create(ctx, r.record()); err != nil {
		return Status{}, err
	}
	if err := m.launch(r, p, nil); err != nil {
		return Status{}, err
	}
	return r.status(), nil
}

// Get returns a search's status: live, or as stored (ended searches
// survive restarts).
func (m *Manager) Get(ctx context.Context, id string) (Status, error) {
	r, err := m.find(ctx, id)
	if err != nil {
		return Status{}, err
	}
	return r.status(), nil
}

// Cancel stops a running search; an ended one is returned unchanged.
func (m *Manager) Cancel(ctx context.Context, id string) (Status, error) {
	r, err := m.find(ctx, id)
	if err != nil {
		return Status{}, err
	}
	r.userCancel()
	return r.status(), nil
}

// Wait blocks until the search ends (or ctx does) and returns its status.
func (m *Manager) Wait(ctx context.Context, id string) (Status, error) {
	r, err := m.find(ctx, id)
	if err != nil {
		return Status{}, err
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return r.status(), ctx.Err()
	}
	return r.status(), nil
}

// Close stops every running search without ending it: their stored state
// stays "running", so ResumeAll picks them up at the next start.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closing = true
	for _, r := range m.runs {
		r.stop()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// find returns the search's run, loading an ended (or orphaned) search from
// the store.
func (m *Manager) find(ctx context.Context, id string) (*run, error) {
	m.mu.Lock()
	r, ok := m.runs[id]
	m.mu.Unlock()
	if ok {
		return r, nil
	}
	if !validID(id) {
		return nil, fmt.Errorf("search %q: %w", id, ErrNotFound)
	}
	rec, steps, err := m.store.load(ctx, id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.runs[id]; ok {
		return cur, nil // resumed meanwhile
	}
	// Not kept: memory holds live searches only (forget).
	return loadedRun(rec, steps), nil
}

func newSearchID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "s_" + hex.EncodeToString(b[:])
}

// validID: ids are ours ("s_" + hex); anything else is not a search and
// must not reach a KV key.
func validID(id string) bool {
	if len(id) != 18 || id[:2] != "s_" {
		return false
	}
	_, err := hex.DecodeString(id[2:])
	return err == nil
}
