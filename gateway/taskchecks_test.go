package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// gatedEvaluator is scriptedEvaluator whose task checks of a source saying
// SLOW wait for gate to close: a busy queue, on demand.
type gatedEvaluator struct {
	scriptedEvaluator
	gateMu sync.Mutex
	gate   chan struct{}
}

// open lets the checks waiting now, and every later one, through.
func (g *gatedEvaluator) open() {
	g.gateMu.Lock()
	defer g.gateMu.Unlock()
	close(g.gate)
}

// shut makes later checks wait again, until the next open.
func (g *gatedEvaluator) shut() {
	g.gateMu.Lock()
	defer g.gateMu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gatedEvaluator) Evaluate(ctx context.Context, j eval.Job) (eval.Verdict, error) {
	if j.TaskCheck && strings.Contains(j.Task.Source, "SLOW") {
		g.gateMu.Lock()
		gate := g.gate
		g.gateMu.Unlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return eval.Verdict{}, ctx.Err()
		}
	}
	return g.scriptedEvaluator.Evaluate(ctx, j)
}

func startGatedStack(t *testing.T) (*Server, *gatedEvaluator) {
	t.Helper()
	b := startBus(t, bus.Options{MaxDeliver: 1})
	ev := &gatedEvaluator{gate: make(chan struct{})}
	runWorker(t, b, ev)
	reg, err := tasks.NewRegistry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t), Tasks: reg,
		TimingMode: func() string { return eval.TimingCPUInterpreter }})
	return srv, ev
}

// pollCheck GETs a task check until it is no longer running.
func pollCheck(t *testing.T, h http.Handler, location string) taskCheckView {
	t.Helper()
	var v taskCheckView
	kgtest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		rec := call(t, h, http.MethodGet, location, "/v1/task-checks/{id}", nil, &v)
		if rec.Code != 200 || v.Status == checkRunning {
			return fmt.Errorf("%d %s", rec.Code, rec.Body)
		}
		return nil
	})
	return v
}

// Past wait_s a registration answers 202 with a Location; the check runs on
// and registers the task; a repeat joins the running check.
func TestRegisterTaskAsync(t *testing.T) {
	srv, ev := startGatedStack(t)
	h := srv.Handler()
	const src = "import torch\nclass Model(torch.nn.Module):\n    pass\n# SLOW\n"
	body := map[string]any{"id": "mine/slow", "source": src, "wait_s": 0}
	var first, again taskCheckView
	rec := call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", body, &first)
	if rec.Code != http.StatusAccepted || first.Status != checkRunning || first.TaskID != "mine/slow" ||
		rec.Header().Get("Location") != first.Location || !strings.HasPrefix(first.Location, "/v1/task-checks/tc_") {
		t.Fatalf("register: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	rec = call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/slow", "source": src, "wait_s": 0.05}, &again)
	if rec.Code != http.StatusAccepted || again.CheckID != first.CheckID {
		t.Fatalf("a repeat joins the running check: %d %s", rec.Code, rec.Body)
	}
	if rec := call(t, h, http.MethodGet, first.Location, "/v1/task-checks/{id}", nil, nil); rec.Code != 200 {
		t.Fatalf("poll while running: %d %s", rec.Code, rec.Body)
	}
	ev.open()
	done := pollCheck(t, h, first.Location)
	if done.Status != checkRegistered || done.Task == nil || done.Task.ID != "mine/slow" || done.Error != nil {
		t.Fatalf("after the check: %+v", done)
	}
	ev.mu.Lock()
	n := len(ev.jobs)
	ev.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d task checks ran for one registration and its repeat", n)
	}
	if rec := call(t, h, http.MethodGet, "/v1/tasks/mine/slow", "/v1/tasks/{id}", nil, nil); rec.Code != 200 {
		t.Fatalf("registered task: %d", rec.Code)
	}
	if rec := call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", body, nil); rec.Code != 200 {
		t.Fatalf("registered again: %d %s", rec.Code, rec.Body)
	}

	// A refusal found after the 202 is in the check's error. The gate is shut
	// again so that the check cannot finish before wait_s 0 has answered.
	ev.shut()
	var bad taskCheckView
	rec = call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/bad", "source": src + "# BROKEN\n", "wait_s": 0}, &bad)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	ev.open()
	if v := pollCheck(t, h, bad.Location); v.Status != checkRefused || v.Error == nil || v.Error.Code != CodeTaskInvalid {
		t.Fatalf("refused: %+v", v)
	}

	rec = call(t, h, http.MethodGet, "/v1/task-checks/tc_nope", "/v1/task-checks/{id}", nil, nil)
	wantError(t, rec, http.StatusNotFound, CodeTaskCheckNotFound, "", "POST /v1/tasks again")
	rec = call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"source": src, "wait_s": 601}, nil)
	wantError(t, rec, http.StatusBadRequest, CodeInvalidRequest, "wait_s", "0..600")
}

// Within wait_s the answer is the synchronous one, as before.
func TestRegisterTaskWithinWait(t *testing.T) {
	srv, _ := startGatedStack(t)
	h := srv.Handler()
	rec := call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/quick", "source": "class Model: pass\n"}, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// A client that gives up is no server error, and its task is still
// registered when the check passes.
func TestRegisterTaskClientGivesUp(t *testing.T) {
	srv, ev := startGatedStack(t)
	h := srv.Handler()
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/tasks",
		strings.NewReader(`{"id": "mine/left", "source": "class Model: pass\n# SLOW\n"}`))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() { h.ServeHTTP(rec, req); close(served) }()
	kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		srv.taskChecks.mu.Lock()
		defer srv.taskChecks.mu.Unlock()
		if len(srv.taskChecks.byID) == 0 {
			return fmt.Errorf("the check has not started")
		}
		return nil
	})
	cancel() // the handler waits on the check (or is about to): it must let go
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not return when its client left")
	}
	if rec.Code >= 500 {
		t.Fatalf("a client that left was answered %d %s", rec.Code, rec.Body)
	}
	ev.open()
	kgtest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		if rec := do(t, h, http.MethodGet, "/v1/tasks/mine/left", nil); rec.Code != 200 {
			return fmt.Errorf("not registered yet: %d", rec.Code)
		}
		return nil
	})
}
