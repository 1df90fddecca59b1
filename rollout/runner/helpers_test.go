package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/tasks"
)

const taskID = "ci/1_add_relu"

func repoFile(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func registry(t testing.TB) *tasks.Registry {
	t.Helper()
	src := repoFile(t, "datasets/ci/1_add_relu.py")
	reg, err := tasks.NewRegistry([]tasks.Task{tasks.New(taskID, src, tasks.OriginSuite, time.Now())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func openBus(t testing.TB, dir string) *bus.Bus {
	t.Helper()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	// Before the TempDir's removal (cleanups run last-in first-out): a server
	// still running then writes its store again, and the test leaves a
	// directory behind in /tmp on every run.
	t.Cleanup(b.Close)
	return b
}

// llmConfig talks to a scripted server without retries or long waits: a
// failed call is a failed step at once.
func llmConfig(url string) llm.Config {
	return llm.Config{BaseURL: url, Model: "scripted", Retries: -1, Timeout: 20 * time.Second}
}

func newManager(t testing.TB, b *bus.Bus, eval rollout.Evaluator, mem rollout.SkillMemory, url string) *Manager {
	t.Helper()
	m, err := NewManager(t.Context(), Deps{Bus: b, Eval: eval, Skills: mem, Tasks: registry(t),
		LLM: llmConfig(url), GPUName: "CPU", Log: kgtest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fakeEval judges by marker comments, instantly: # BROKEN fails to
// compile, # WRONG is incorrect, anything else is correct (no speedup, as
// on the CPU interpreter). For the tests of the runner's own plumbing; the
// story tests use the real harness.
type fakeEval struct{ calls atomic.Int32 }

func (f *fakeEval) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	f.calls.Add(1)
	v := eval.Verdict{SchemaVersion: eval.SchemaVersion, TimingMode: eval.TimingCPUInterpreter,
		CodeHash: eval.HashSource(job.Code), TritonLaunches: 1, TrialsTotal: 1}
	switch {
	case strings.Contains(job.Code, "# BROKEN"):
		v.Status, v.ErrorSignature, v.Feedback = eval.StatusCompileError, "NameError: name 'tl_load' is not defined", "NameError"
	case strings.Contains(job.Code, "# WRONG"):
		v.Status, v.Compiled = eval.StatusIncorrect, true
	default:
		v.Status, v.Compiled, v.Correct, v.TrialsPassed = eval.StatusCorrect, true, true, 1
	}
	return v, ctx.Err()
}

func fenced(code string) string { return "Here is the kernel:\n```python\n" + code + "```\n" }

// kernel is a tiny ModelNew with a marker comment (for fakeEval).
func kernel(marker string) string {
	return "import torch\nimport triton\n# " + marker + "\nclass ModelNew(torch.nn.Module):\n    pass\n"
}

func waitState(t testing.TB, m *Manager, id string, d time.Duration) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	st, err := m.Wait(ctx, id)
	if err != nil {
		t.Fatalf("search %s not ended after %s: %v (status %+v)", id, d, err, st)
	}
	return st
}

// runToEnd starts req on m, waits up to d for the search to end and returns
// every step event it published.
func runToEnd(t testing.TB, m *Manager, req Request, d time.Duration) []Event {
	t.Helper()
	st, err := m.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	st = waitState(t, m, st.SearchID, d)
	ch, err := m.Subscribe(t.Context(), st.SearchID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var steps []Event
	for ev := range ch {
		steps = append(steps, ev)
	}
	return steps
}

// runSink runs a Parquet sink on b, writing under dir/parquet, until the
// test ends.
func runSink(t testing.TB, b *bus.Bus, dir, writer string) {
	t.Helper()
	sink, err := export.NewSink(filepath.Join(dir, "parquet"), writer, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var eg errgroup.Group
	eg.Go(func() error { return sink.Run(ctx, b) })
	t.Cleanup(func() { stop(); _ = eg.Wait() })
}
