package worker

import (
	"context"
	"encoding/json"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// stallingEvaluator runs until its context ends, as a slow kernel would.
type stallingEvaluator struct{ calls atomic.Int32 }

func (s *stallingEvaluator) Evaluate(ctx context.Context, _ eval.Job) (eval.Verdict, error) {
	s.calls.Add(1)
	<-ctx.Done()
	return eval.Verdict{}, ctx.Err()
}
func (s *stallingEvaluator) Stats() []harness.ZygoteStats { return nil }
func (s *stallingEvaluator) Mode() string                 { return eval.TimingCPUInterpreter }

// An item its request's deadline leaves behind is stopped and answered
// harness_error with retry "deadline", masked (valid false); one whose
// deadline passed in the queue does not run at all.
func TestDeadline(t *testing.T) {
	for _, tt := range []struct {
		name      string
		deadline  time.Duration
		wantCalls int32
	}{
		{"stopped while running", 300 * time.Millisecond, 1},
		{"passed in the queue", -time.Second, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := &stallingEvaluator{}
			b := startRun(t, ev)
			sub, err := b.Subscribe(t.Context(), dispatch.ResultsSubject("b1"))
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			job := dispatch.Job{ID: "b1-00000", BatchID: "b1", Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
				RewardFn: "binary", EnqueuedAt: time.Now(), Deadline: time.Now().Add(tt.deadline)}
			data, _ := json.Marshal(job)
			t0 := time.Now()
			if err := b.PublishJob(t.Context(), dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
				t.Fatal(err)
			}
			r := next(t, sub)
			if r.Verdict.Status != eval.StatusHarnessError || r.Verdict.Retry != "deadline" || r.Valid {
				t.Fatalf("result %+v", r)
			}
			if took := time.Since(t0); took > 5*time.Second {
				t.Errorf("answered after %s", took)
			}
			if got := ev.calls.Load(); got != tt.wantCalls {
				t.Errorf("Evaluate called %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}

// Items with a deadline share only with items of the same deadline; the
// cache key ignores it (a cached verdict answers any request).
func TestShareKeyHoldsTheDeadline(t *testing.T) {
	j := dispatch.Job{Job: eval.Job{Task: eval.Task{Source: "src"}, Code: "code", Options: eval.DefaultOptions()}}
	d := j
	d.Deadline = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	wk, _ := dispatch.WorkKey(j)
	plain, _ := dispatch.ShareKey(j)
	timed, _ := dispatch.ShareKey(d)
	ck1, _ := dispatch.CacheKey(j, dispatch.Env{})
	ck2, _ := dispatch.CacheKey(d, dispatch.Env{})
	if plain != wk || timed == plain || ck1 != ck2 {
		t.Fatalf("share keys %q %q (work %q); cache keys equal %v", plain, timed, wk, ck1 == ck2)
	}
	// A share key names KV entries (and a watch on KEY.*): NATS takes only these.
	if !regexp.MustCompile(`^[-/_=.A-Za-z0-9]+$`).MatchString(timed) {
		t.Fatalf("share key %q is not a valid NATS KV key", timed)
	}
}
