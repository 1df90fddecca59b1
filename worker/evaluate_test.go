package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

func cpuMode() string { return eval.TimingCPUInterpreter }

// A search's evaluation goes through the queue to a worker and back; the
// worker logs nothing for it (the search logs it under its step's id).
func TestEvaluateRunsOnAWorkerAndLeavesTheLogToItsCaller(t *testing.T) {
	ev := &scriptedEvaluator{status: eval.StatusCorrect}
	b := startRun(t, ev)
	q := &dispatch.Service{Bus: b, Mode: cpuMode, Poll: 200 * time.Millisecond}
	job := eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()}
	for i := range 2 {
		v, err := q.Evaluate(t.Context(), job)
		if err != nil || v.Status != eval.StatusCorrect || v.Feedback != "scripted" {
			t.Fatalf("evaluation %d: %+v %v", i, v, err)
		}
	}
	if n := ev.calls.Load(); n != 2 { // each call evaluates: no cache, no sharing
		t.Fatalf("%d evaluations, want 2", n)
	}
	if n, err := b.EventsBacklog(t.Context(), "probe"); n != 0 || err != nil {
		t.Fatalf("the worker logged %d events (%v)", n, err)
	}
}

// A caller that gives up is not left hanging: it gets its context's error,
// or the deadline verdict of the job's evaluation, stopped at the caller's
// deadline (whichever comes first).
func TestEvaluateStopsWaitingWithItsCaller(t *testing.T) {
	ev := &stallingEvaluator{}
	b := startRun(t, ev)
	q := &dispatch.Service{Bus: b, Mode: cpuMode, Poll: 100 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	t0 := time.Now()
	v, err := q.Evaluate(ctx, eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code",
		Options: eval.DefaultOptions()})
	stopped := errors.Is(err, context.DeadlineExceeded) || (err == nil && v.Retry == "deadline")
	if !stopped || time.Since(t0) > 5*time.Second {
		t.Fatalf("%+v, err %v after %s", v, err, time.Since(t0))
	}
	if ev.calls.Load() != 1 {
		t.Fatalf("%d evaluations started, want 1", ev.calls.Load())
	}
}

// A search's evaluation goes through the result cache: the first run files
// its verdict under the step's eval_id (not the queue's job id, which no row
// of the log carries), and the same work asked again is answered from the
// cache, pointing at that eval_id, without a second run.
func TestEvaluateCachedAnswersARepeatFromTheCache(t *testing.T) {
	ev := &scriptedEvaluator{status: eval.StatusCorrect}
	b := startRun(t, ev)
	envs := func() []dispatch.Env { return []dispatch.Env{dispatch.EnvOf(eval.Verdict{})} } // the scripted verdicts'
	q := &dispatch.Service{Bus: b, Mode: cpuMode, Envs: envs, Poll: 200 * time.Millisecond}
	job := eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()}
	v, source, err := q.EvaluateCached(t.Context(), "s_1-1", job)
	if err != nil || source != "" || v.Status != eval.StatusCorrect {
		t.Fatalf("first evaluation: %+v, source %q, %v", v, source, err)
	}
	v, source, err = q.EvaluateCached(t.Context(), "s_1-2", job)
	if err != nil || source != "s_1-1" || v.Status != eval.StatusCorrect || v.ExecMS != nil {
		t.Fatalf("the repeat: %+v, source %q (want s_1-1), %v", v, source, err)
	}
	other := job
	other.Code = "other code"
	if _, source, err = q.EvaluateCached(t.Context(), "s_1-3", other); err != nil || source != "" {
		t.Fatalf("other code: source %q, %v; want a run of its own", source, err)
	}
	if n := ev.calls.Load(); n != 2 {
		t.Fatalf("%d evaluations, want 2 (the repeat was cached)", n)
	}
}
