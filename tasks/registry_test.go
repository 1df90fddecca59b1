package tasks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func openBus(t *testing.T, dir string) *bus.Bus {
	t.Helper()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func busStore(t *testing.T, b *bus.Bus) Store {
	t.Helper()
	s, err := OpenBusStore(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One body, every store.
func TestRegistry(t *testing.T) {
	stores := map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"bus":    func(t *testing.T) Store { return busStore(t, openBus(t, t.TempDir())) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { testRegistry(t, open(t)) })
	}
}

// api is a task as the gateway hands it to Register.
func api(id, source string) Task { return New(id, source, OriginAPI, time.Time{}) }

func testRegistry(t *testing.T, store Store) {
	ctx := t.Context()
	suite := []Task{New("ci/1_add", "add", OriginSuite, time.Unix(1, 0))}
	r, err := NewRegistry(suite, store)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, "ci/1_add"); err != nil || got.Source != "add" {
		t.Fatalf("suite task: %+v %v", got, err)
	}
	for _, id := range []string{"nope", "api/zzz", "bad id"} {
		if _, err := r.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", id, err)
		}
	}
	tk, created, err := r.Register(ctx, api("mine/relu", "relu"))
	if err != nil || !created || tk.Origin != OriginAPI || tk.Name != "relu" || tk.CreatedAt.IsZero() {
		t.Fatalf("Register: %+v %v %v", tk, created, err)
	}
	again, created, err := r.Register(ctx, api("mine/relu", "relu"))
	if err != nil || created || !again.CreatedAt.Equal(tk.CreatedAt) {
		t.Errorf("same source again: %+v created %v err %v", again, created, err)
	}
	for _, id := range []string{"mine/relu", "ci/1_add"} {
		if _, _, err := r.Register(ctx, api(id, "other")); !errors.Is(err, ErrExists) {
			t.Errorf("another source under %s: %v, want ErrExists", id, err)
		}
	}
	if got, created, err := r.Register(ctx, api("ci/1_add", "add")); err != nil || created || got.Origin != OriginSuite {
		t.Errorf("a suite's own source under its id: %+v %v %v", got, created, err)
	}
	if _, _, err := r.Register(ctx, api("bad id", "x")); err == nil {
		t.Error("registered an invalid id")
	}
	if _, _, err := r.Register(ctx, Task{ID: "mine/raw", Name: "raw", Source: "raw"}); err == nil {
		t.Error("registered a task without a hash")
	}
	got, err := r.Get(ctx, "mine/relu")
	if err != nil || got.TaskHash != tk.TaskHash || got.Source != "relu" {
		t.Errorf("Get after Register: %+v %v", got, err)
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "ci/1_add" || list[1].ID != "mine/relu" {
		t.Errorf("List = %+v %v", list, err)
	}
}

// API tasks survive a restart: a new bus on the same store, a new registry.
func TestBusStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b := openBus(t, dir)
	r, err := NewRegistry(nil, busStore(t, b))
	if err != nil {
		t.Fatal(err)
	}
	tk, _, err := r.Register(t.Context(), api("mine/relu", "relu"))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	r2, err := NewRegistry(nil, busStore(t, openBus(t, dir)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r2.Get(context.Background(), "mine/relu")
	if err != nil || got != tk {
		t.Fatalf("after restart: %+v %v, want %+v", got, err, tk)
	}
}

func TestSuiteShadowsStoredTask(t *testing.T) {
	store := NewMemoryStore()
	store.Create(t.Context(), New("ci/1_add", "old", OriginAPI, time.Now()))
	r, err := NewRegistry([]Task{New("ci/1_add", "new", OriginSuite, time.Now())}, store)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := r.List(t.Context())
	if len(list) != 1 || list[0].Source != "new" {
		t.Errorf("List = %+v", list)
	}
	if _, err := NewRegistry([]Task{New("a", "1", OriginSuite, time.Now()), New("a", "2", OriginSuite, time.Now())}, nil); err == nil {
		t.Error("two suite tasks with one id accepted")
	}
}

// An inline reference that is a registered task's source is that task: suite
// tasks first (even where an API id sorts before), then API tasks (the
// smallest id), a shadowed stored task never.
func TestRegistryByHash(t *testing.T) {
	ctx := t.Context()
	store := NewMemoryStore()
	suite := []Task{New("ci/2_add", "add", OriginSuite, time.Unix(1, 0)), New("ci/1_add", "add", OriginSuite, time.Unix(1, 0))}
	r, err := NewRegistry(suite, store)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []Task{api("mine/z_relu", "relu"), api("mine/a_relu", "relu"), api("a/add", "add")} {
		if _, _, err := r.Register(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	// A stored task under an id a suite took later: hidden, as in List.
	if err := store.Create(ctx, New("ci/9_old", "old", OriginAPI, time.Unix(1, 0))); err != nil {
		t.Fatal(err)
	}
	r.suite["ci/9_old"] = New("ci/9_old", "new", OriginSuite, time.Unix(1, 0))
	for _, tt := range []struct{ source, id string }{
		{"add", "ci/1_add"}, {"relu", "mine/a_relu"}, {"relu ", ""}, {"old", ""}, {"", ""},
	} {
		got, ok, err := r.ByHash(ctx, eval.HashSource(tt.source))
		if err != nil || ok != (tt.id != "") || got.ID != tt.id {
			t.Errorf("ByHash(hash of %q) = %q, %v, %v; want %q", tt.source, got.ID, ok, err, tt.id)
		}
	}
}
