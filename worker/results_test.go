package worker

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// scriptedEvaluator answers every job with a verdict of one status.
type scriptedEvaluator struct {
	status eval.Status
	calls  atomic.Int32
}

func (s *scriptedEvaluator) Evaluate(_ context.Context, j eval.Job) (eval.Verdict, error) {
	s.calls.Add(1)
	return dispatch.Verdict(eval.TimingCPUInterpreter, dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}, s.status, "scripted", ""), nil
}

func (s *scriptedEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 1}}
}

func (s *scriptedEvaluator) Mode() string { return eval.TimingCPUInterpreter }

func nextRaw(t *testing.T, sub *bus.Subscription) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	data, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("no result: %v", err)
	}
	return data
}

// By the time a result is announced it is stored (so a reader that hears of
// it can read it back), and a deterministic verdict is in the cache.
func TestResultStoredBeforeNotify(t *testing.T) {
	for _, tt := range []struct {
		status eval.Status
		cached bool
	}{
		{eval.StatusCorrect, true},
		{eval.StatusCompileError, true},
		{eval.StatusTimeout, false},
		{eval.StatusResourceLimit, false},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			b := startRun(t, &scriptedEvaluator{status: tt.status})
			ctx := t.Context()
			sub, err := b.Subscribe(ctx, dispatch.ResultsSubject("b1"))
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			job := dispatch.Job{ID: "b1-00002", BatchID: "b1", Index: 2, Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
				RewardFn: "binary", EnqueuedAt: time.Now()}
			data, _ := json.Marshal(job)
			if err := b.PublishJob(ctx, dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
				t.Fatal(err)
			}
			note := nextRaw(t, sub)
			stored, err := b.Results(ctx, "b1")
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 1 || string(stored[2]) != string(note) {
				t.Fatalf("stored %d results (index 2: %s), notified %s", len(stored), stored[2], note)
			}
			var r dispatch.Result
			if err := json.Unmarshal(note, &r); err != nil || r.Cached || r.Verdict.Status != tt.status {
				t.Fatalf("result %+v (%v)", r, err)
			}
			key, _ := dispatch.CacheKey(job, dispatch.EnvOf(r.Verdict))
			v, ok, err := b.CacheGet(ctx, key)
			if err != nil || ok != tt.cached {
				t.Fatalf("cache entry present %v (%v), want %v", ok, err, tt.cached)
			}
			if ok {
				var cv eval.Verdict
				if err := json.Unmarshal(v, &cv); err != nil || cv.Status != tt.status {
					t.Errorf("cached verdict %s (%v)", v, err)
				}
			}
		})
	}
}

// A job evaluated twice (redelivered after its result was stored) announces
// the first result both times.
func TestPublishResultFirstWins(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx := t.Context()
	sub, err := b.Subscribe(ctx, dispatch.ResultsSubject("b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	job := dispatch.Job{ID: "b1-00000", BatchID: "b1", Job: eval.Job{Task: eval.Task{Source: "src"}, Code: "c"}}
	for _, rew := range []float64{1, 0} {
		r := dispatch.Result{ID: job.ID, Reward: rew, Verdict: dispatch.Verdict("", job, eval.StatusCorrect, "", "")}
		if err := dispatch.PublishResult(ctx, b, job, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		var r dispatch.Result
		if err := json.Unmarshal(nextRaw(t, sub), &r); err != nil || r.Reward != 1 {
			t.Errorf("notification %d: reward %v (%v), want the first result's 1", i, r.Reward, err)
		}
	}
}
