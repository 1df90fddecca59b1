package tasks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Errors of the registry.
var (
	ErrNotFound = errors.New("tasks: no such task")
	// ErrExists: the id already names a task with another source.
	ErrExists = errors.New("tasks: id taken by another source")
)

// Store keeps API-registered tasks. Implementations: MemoryStore (tests, a
// gateway without a bus) and BusStore (a JetStream KV bucket).
type Store interface {
	// Get returns the task stored under id, or ok false.
	Get(ctx context.Context, id string) (t Task, ok bool, err error)
	// Create stores t unless its id is taken (ErrExists, whatever the source).
	Create(ctx context.Context, t Task) error
	// List returns every stored task, in any order.
	List(ctx context.Context) ([]Task, error)
}

// Registry resolves task ids: suite tasks (in memory, loaded at start) and
// API tasks (in its Store). Safe for concurrent use.
type Registry struct {
	suite  map[string]Task
	byHash map[string]Task // suite tasks by TaskHash; the smallest id where two share one
	store  Store
	now    func() time.Time
}

// NewRegistry builds a registry over the suite tasks and store (nil: a
// MemoryStore). Two suite tasks with one id are an error.
func NewRegistry(suite []Task, store Store) (*Registry, error) {
	if store == nil {
		store = NewMemoryStore()
	}
	r := &Registry{suite: make(map[string]Task, len(suite)), byHash: map[string]Task{}, store: store, now: time.Now}
	for _, t := range suite {
		if _, dup := r.suite[t.ID]; dup {
			return nil, fmt.Errorf("tasks.NewRegistry: two suite tasks are %s", t.ID)
		}
		r.suite[t.ID] = t
		if prev, ok := r.byHash[t.TaskHash]; !ok || t.ID < prev.ID {
			r.byHash[t.TaskHash] = t
		}
	}
	return r, nil
}

// ByHash returns the registered task whose TaskHash is taskHash, so a
// request that sends a suite task's reference inline is logged under its id
// (one task, one group in every export). Suite tasks first, then API tasks
// (the smallest id when several match); ok false when none does. It takes
// the hash, not the source: the caller hashed the reference where it
// entered and carries that hash on with the task.
func (r *Registry) ByHash(ctx context.Context, taskHash string) (t Task, ok bool, err error) {
	if t, ok := r.byHash[taskHash]; ok {
		return t, true, nil
	}
	stored, err := r.store.List(ctx)
	if err != nil {
		return Task{}, false, fmt.Errorf("tasks.ByHash: %w", err)
	}
	for _, c := range stored {
		if _, shadowed := r.suite[c.ID]; !shadowed && c.TaskHash == taskHash && (!ok || c.ID < t.ID) {
			t, ok = c, true
		}
	}
	return t, ok, nil
}

// Get returns the task called id, or an error wrapping ErrNotFound.
func (r *Registry) Get(ctx context.Context, id string) (Task, error) {
	if t, ok := r.suite[id]; ok {
		return t, nil
	}
	if ValidID(id) != nil {
		return Task{}, fmt.Errorf("tasks.Get %q: %w", id, ErrNotFound)
	}
	t, ok, err := r.store.Get(ctx, id)
	switch {
	case err != nil:
		return Task{}, fmt.Errorf("tasks.Get %q: %w", id, err)
	case !ok:
		return Task{}, fmt.Errorf("tasks.Get %q: %w", id, ErrNotFound)
	}
	return t, nil
}

// List returns every task, sorted by id. A stored task whose id a suite
// took since (the suites changed across a restart) is hidden: the suite's wins.
func (r *Registry) List(ctx context.Context) ([]Task, error) {
	stored, err := r.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("tasks.List: %w", err)
	}
	out := make([]Task, 0, len(r.suite)+len(stored))
	for _, t := range r.suite {
		out = append(out, t)
	}
	for _, t := range stored {
		if _, shadowed := r.suite[t.ID]; !shadowed {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Task) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Register stores t, built by New, as an API task: its origin becomes
// OriginAPI and its CreatedAt the registry's clock now. The caller has
// validated the source (a task check in the sandbox). It returns the task
// and whether it is new: the same source under the same id again is not an
// error (the existing task comes back, created false); another source under
// a taken id is ErrExists.
func (r *Registry) Register(ctx context.Context, t Task) (Task, bool, error) {
	id := t.ID
	if err := ValidID(id); err != nil {
		return Task{}, false, fmt.Errorf("tasks.Register: %w", err)
	}
	if t.TaskHash == "" { // New makes it; a task without one was not built by New
		return Task{}, false, fmt.Errorf("tasks.Register %s: the task has no hash; build it with tasks.New", id)
	}
	t.Origin, t.CreatedAt = OriginAPI, r.now().UTC()
	if prev, ok := r.suite[id]; ok {
		return same(prev, t)
	}
	err := r.store.Create(ctx, t)
	if errors.Is(err, ErrExists) {
		prev, ok, gerr := r.store.Get(ctx, id)
		if gerr != nil || !ok {
			return Task{}, false, fmt.Errorf("tasks.Register %s: %w", id, ErrExists)
		}
		return same(prev, t)
	}
	if err != nil {
		return Task{}, false, fmt.Errorf("tasks.Register %s: %w", id, err)
	}
	return t, true, nil
}

// same answers a registration of t under an id prev already holds.
func same(prev, t Task) (Task, bool, error) {
	if prev.TaskHash == t.TaskHash {
		return prev, false, nil
	}
	return Task{}, false, fmt.Errorf("tasks.Register %s: %w (%s %s)", t.ID, ErrExists, prev.Origin, prev.TaskHash)
}

// MemoryStore is a Store in memory: nothing survives the process.
type MemoryStore struct {
	mu    sync.Mutex
	tasks map[string]Task
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{tasks: map[string]Task{}} }

func (m *MemoryStore) Get(_ context.Context, id string) (Task, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	return t, ok, nil
}

func (m *MemoryStore) Create(_ context.Context, t Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[t.ID]; ok {
		return ErrExists
	}
	m.tasks[t.ID] = t
	return nil
}

func (m *MemoryStore) List(context.Context) ([]Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Task, 0, len(m.tasks))
	for _, t := range m.tasks {
		out = append(out, t)
	}
	return out, nil
}
