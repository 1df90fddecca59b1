package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/worker"
)

// fakeEvaluator stands in for the harness behind a real bus and a real
// worker: it answers by the code's content, as the harness would for such
// kernels ("": invalid_submission, "wrong": incorrect, "slow": timeout, else
// correct), and code
// containing "hold" waits until release is closed.
type fakeEvaluator struct {
	release chan struct{}

	mu    sync.Mutex
	calls map[string]int
}

func (f *fakeEvaluator) Evaluate(ctx context.Context, j eval.Job) (eval.Verdict, error) {
	f.mu.Lock()
	f.calls[j.Code]++
	f.mu.Unlock()
	if strings.Contains(j.Code, "hold") {
		select {
		case <-f.release:
		case <-ctx.Done():
			return eval.Verdict{}, ctx.Err()
		}
	}
	status := eval.StatusCorrect
	switch {
	case j.Code == "": // the judge's "empty submission" (a completion without code, inline task)
		status = eval.StatusInvalidSubmission
	case strings.Contains(j.Code, "wrong"):
		status = eval.StatusIncorrect
	case strings.Contains(j.Code, "slow"):
		status = eval.StatusTimeout
	}
	v := dispatch.Verdict(eval.TimingCPUInterpreter, dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}, status, "fake verdict", "")
	v.Compiled, v.Correct = status != eval.StatusInvalidSubmission, status == eval.StatusCorrect
	v.Env = fakeEnv
	return v, nil
}

// fakeEnv is where the fake evaluates, as a zygote would record it.
var fakeEnv = eval.Env{Device: "cpu", Python: "3.12.3", Torch: "2.11.0+cu130", Triton: "3.6.0", HarnessVersion: "0.2.0"}

// fakeEnvs are the pool environments of a gateway in front of the fake.
func fakeEnvs() []dispatch.Env { return []dispatch.Env{dispatch.EnvOf(eval.Verdict{Env: fakeEnv})} }

func (f *fakeEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 4}}
}

func (f *fakeEvaluator) Mode() string { return eval.TimingCPUInterpreter }

// total is how many evaluations ran.
func (f *fakeEvaluator) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// callsOf is how many times code was evaluated.
func (f *fakeEvaluator) callsOf(code string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[code]
}

// startFake runs a gateway, a real worker with a fakeEvaluator and a real
// bus; everything stops at cleanup.
func startFake(t *testing.T, cfg Config) (*Server, *bus.Bus, *fakeEvaluator) {
	t.Helper()
	// A short EventAckWait: an event dropped at the edge of a fetch comes back soon.
	b := startBus(t, bus.Options{NakDelay: 50 * time.Millisecond, EventAckWait: 2 * time.Second})
	ev := &fakeEvaluator{release: make(chan struct{}), calls: map[string]int{}}
	runWorker(t, b, ev)
	return newFakeGateway(t, cfg, b, fakeEnvs), b, ev
}

// newFakeGateway is another gateway over b (whose workers run the fake),
// whose pool is envs.
func newFakeGateway(t *testing.T, cfg Config, b *bus.Bus, envs func() []dispatch.Env) *Server {
	return New(cfg, Deps{Bus: b, Ready: func() error { return nil }, Envs: envs,
		TimingMode: func() string { return eval.TimingCPUInterpreter }, Log: kgtest.Logger(t)})
}

// runWorker runs a real worker over b with ev in place of the harness until
// the test's cleanup.
func runWorker(t *testing.T, b *bus.Bus, ev worker.Evaluator) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, b, ev, kgtest.Logger(t)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// post sends v as JSON to path.
func post(t *testing.T, h http.Handler, path string, v map[string]any) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, http.MethodPost, path, body(t, v))
}
