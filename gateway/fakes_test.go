package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// scriptedEvaluator stands in for the harness behind a real worker and bus:
// the code decides the verdict. "GOOD" in it: correct; "HACK": reward_hack;
// "FAIL": the evaluation cannot run (an error, as with no zygote); anything
// else: incorrect; no code: invalid_submission, or a task error when the
// source says "BROKEN" (the judge checks the reference first). A task check: harness_error with a task_error when the
// source says "BROKEN", cannot run on "FAIL", else valid.
type scriptedEvaluator struct {
	mu   sync.Mutex
	jobs []eval.Job
}

func (f *scriptedEvaluator) Evaluate(_ context.Context, j eval.Job) (eval.Verdict, error) {
	f.mu.Lock()
	f.jobs = append(f.jobs, j)
	f.mu.Unlock()
	wj := dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}
	switch {
	case strings.Contains(j.Code, "FAIL") || (j.TaskCheck && strings.Contains(j.Task.Source, "FAIL")):
		return eval.Verdict{}, errFake
	case j.TaskCheck && strings.Contains(j.Task.Source, "BROKEN"):
		v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusHarnessError, "task error: reference raised RuntimeError: BROKEN", "")
		v.TaskError = j.Task.Path + ": reference raised RuntimeError: BROKEN"
		return v, nil
	case j.TaskCheck:
		return dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusCorrect, "task check passed", ""), nil
	case j.Code == "": // as the judge: the reference is checked first, then the empty submission
		if strings.Contains(j.Task.Source, "BROKEN") {
			v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusHarnessError, "task error: BROKEN reference", "")
			v.TaskError = j.Task.Path + ": the reference does not define Model (BROKEN)"
			return v, nil
		}
		return dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusInvalidSubmission, "empty submission", ""), nil
	case strings.Contains(j.Code, "GOOD"):
		v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusCorrect, "", "")
		v.Compiled, v.Correct, v.TrialsPassed, v.TrialsTotal = true, true, 2, 2
		return v, nil
	case strings.Contains(j.Code, "HACK"):
		v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusRewardHack, "reward hack checks failed: cache", "")
		v.Compiled, v.HackFlags = true, []string{eval.FlagCache}
		return v, nil
	}
	v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusIncorrect, "mismatch in trial 0 (seed 0): worst at index 3", "Mismatch: output mismatch")
	v.Compiled, v.TrialsTotal = true, 2
	return v, nil
}

func (f *scriptedEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 4}}
}
func (f *scriptedEvaluator) Mode() string { return eval.TimingCPUInterpreter }

var errFake = errors.New("no zygote is up")

// fakeStack is a gateway over a real bus and worker, with the scripted
// evaluator in place of the harness, the ci suite, and episodes on a fake clock.
type fakeStack struct {
	h     http.Handler
	bus   *bus.Bus
	ev    *scriptedEvaluator
	clock *kgtest.Clock
}

// ciRegistry is a task registry of datasets/ci, with store (nil: none) for
// the tasks registered over the API.
func ciRegistry(t *testing.T, store tasks.Store) *tasks.Registry {
	t.Helper()
	suite, err := tasks.LoadSuites([]string{"../datasets/ci"})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tasks.NewRegistry(suite, store)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func startFakeStack(t *testing.T) *fakeStack {
	t.Helper()
	return startFakeStackWith(t, Config{MaxItems: 16, DefaultWait: 30 * time.Second})
}

// startFakeStackWith is startFakeStack with the server configured by cfg.
func startFakeStackWith(t *testing.T, cfg Config) *fakeStack {
	t.Helper()
	b := startBus(t, bus.Options{MaxDeliver: 1})
	ev := &scriptedEvaluator{}
	runWorker(t, b, ev)
	reg := ciRegistry(t, nil)
	c := kgtest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	eps, err := episode.Open(t.Context(), b, episode.Config{Idle: time.Hour, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(cfg, Deps{Bus: b, Log: kgtest.Logger(t), Tasks: reg, Episodes: eps,
		TimingMode: func() string { return eval.TimingCPUInterpreter }}) // its workers' mode: their queue
	return &fakeStack{h: srv.Handler(), bus: b, ev: ev, clock: c}
}

// call sends a JSON request (v marshalled, or raw when v is []byte), checks
// the answer against openapi.yaml (specPath names the path template) and
// decodes a 2xx body into out when given.
func call(t *testing.T, h http.Handler, method, path, specPath string, v any, out any) *httptest.ResponseRecorder {
	t.Helper()
	var data []byte
	switch v := v.(type) {
	case nil:
	case []byte:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	rec := do(t, h, method, path, data)
	checkSpec(t, method, specPath, rec)
	if out != nil && rec.Code < 300 {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, rec.Body)
		}
	}
	return rec
}

// wantError fails t unless rec is the error answer status/code/field whose
// message contains every want.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code Code, field string, want ...string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	e := decodeError(t, rec)
	if e.Code != code || e.Field != field {
		t.Errorf("error %+v, want code %s field %q", e, code, field)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			t.Errorf("message %q lacks %q", e.Message, w)
		}
	}
}
