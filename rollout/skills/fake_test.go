package skills

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout"
)

// fakeLLM answers by Purpose: each purpose has a queue of scripted answers;
// when the queue is empty, fallback (if set) answers.
type fakeLLM struct {
	mu       sync.Mutex
	script   map[string][]string
	fallback func(rollout.Request) (string, error)
	calls    []rollout.Request
}

func newFakeLLM() *fakeLLM { return &fakeLLM{script: map[string][]string{}} }

func (f *fakeLLM) push(purpose string, answers ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script[purpose] = append(f.script[purpose], answers...)
}

func (f *fakeLLM) Complete(ctx context.Context, req rollout.Request) (rollout.Completion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	if q := f.script[req.Purpose]; len(q) > 0 {
		f.script[req.Purpose] = q[1:]
		return rollout.Completion{Text: q[0], FinishReason: "stop"}, nil
	}
	if f.fallback != nil {
		text, err := f.fallback(req)
		return rollout.Completion{Text: text, FinishReason: "stop"}, err
	}
	return rollout.Completion{}, errors.New("fakeLLM: nothing scripted for " + req.Purpose)
}

// callsFor returns the requests made with purpose.
func (f *fakeLLM) callsFor(purpose string) []rollout.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []rollout.Request
	for _, c := range f.calls {
		if c.Purpose == purpose {
			out = append(out, c)
		}
	}
	return out
}

// recorder collects OnChange events.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) on(rule Rule, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{rule, reason})
}

func (r *recorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.reason)
	}
	return out
}

func (r *recorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// fixture is a memory over a FileStore in a temp dir, a fake LLM and a
// fixed clock.
type fixture struct {
	mem   *Memory
	llm   *fakeLLM
	rec   *recorder
	store *FileStore
	path  string
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{llm: newFakeLLM(), rec: &recorder{}, path: t.TempDir() + "/skills.json"}
	f.store = NewFileStore(f.path)
	cfg.OnChange = f.rec.on
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0 }
	}
	f.mem = New(f.store, f.llm, cfg, kgtest.Logger(t))
	return f
}

var env = eval.Env{Device: "cuda:0", GPUName: "NVIDIA H200", Torch: "2.11.0", Triton: "3.6.0"}

// failure is a compile error observation with a raw (unnormalised) signature.
func failure(evalID, task, sig, code string) rollout.Observation {
	return rollout.Observation{
		SearchID: "search-1", TaskID: task, EvalID: evalID, Code: code,
		Verdict: eval.Verdict{Status: eval.StatusCompileError, ErrorSignature: sig,
			Feedback: "feedback for " + evalID, Env: env},
	}
}

// passed is a correct observation.
func passed(evalID, code string, used, omitted []string) rollout.Observation {
	return rollout.Observation{
		SearchID: "search-1", TaskID: "t", EvalID: evalID, Code: code, Used: used, Omitted: omitted,
		Verdict: eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true, Env: env},
	}
}

func (f *fixture) observe(t *testing.T, obs ...rollout.Observation) {
	t.Helper()
	for _, o := range obs {
		if err := f.mem.Observe(context.Background(), o); err != nil {
			t.Fatalf("Observe %s: %v", o.EvalID, err)
		}
	}
}

func (f *fixture) rules(t *testing.T) []Rule {
	t.Helper()
	rs, err := f.mem.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// nameErrors are three raw signatures of one mistake on three tasks.
func nameErrors(n int) []rollout.Observation {
	var out []rollout.Observation
	for i := range n {
		sig := fmt.Sprintf("NameError: name 'tl.foo%d' is not defined", i)
		out = append(out, failure(fmt.Sprintf("e%d", i), fmt.Sprintf("task%d", i), sig,
			fmt.Sprintf("@triton.jit\ndef k%d(x):\n    y = tl.foo%d(x)\n", i, i)))
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
