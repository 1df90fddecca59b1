package worker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// spanEvaluator runs two at once; an evaluation lasts what its code's
// second word names ("A fast", "A slow" …) and records when it ran.
type spanEvaluator struct {
	durations map[string]time.Duration
	t0        time.Time

	mu    sync.Mutex
	start map[string]time.Duration
	end   map[string]time.Duration
}

func newSpanEvaluator(d map[string]time.Duration) *spanEvaluator {
	return &spanEvaluator{durations: d, t0: time.Now(), start: map[string]time.Duration{}, end: map[string]time.Duration{}}
}

func (s *spanEvaluator) Evaluate(ctx context.Context, j eval.Job) (eval.Verdict, error) {
	s.mu.Lock()
	s.start[j.Code] = time.Since(s.t0)
	s.mu.Unlock()
	select {
	case <-time.After(s.durations[strings.Fields(j.Code)[1]]):
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.end[j.Code] = time.Since(s.t0)
	s.mu.Unlock()
	return dispatch.Verdict(eval.TimingCPUInterpreter, dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}, eval.StatusCorrect, "", ""), nil
}
func (s *spanEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 2}}
}
func (s *spanEvaluator) Mode() string { return eval.TimingCPUInterpreter }

// run submits the batches one after another (each a list of codes) and
// waits until every evaluation has ended; it returns their starts and ends.
func (s *spanEvaluator) run(t *testing.T, batches ...[]string) (start, end map[string]time.Duration) {
	t.Helper()
	svc := orderService(startRun(t, s))
	s.t0 = time.Now()
	n := 0
	for i, codes := range batches {
		items := make([]dispatch.Item, len(codes))
		for k, c := range codes {
			items[k] = dispatch.Item{Code: c}
		}
		b := dispatch.Batch{ID: "b_" + string(rune('A'+i)), Task: eval.Task{Name: "t", Source: "src"}, TaskHash: eval.HashSource("src"), Items: items,
			Options: eval.DefaultOptions(), ClientID: "trainer"}
		if err := svc.Submit(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		n += len(codes)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		done := len(s.end)
		s.mu.Unlock()
		if done == n {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.end) != n {
		t.Fatalf("%d of %d evaluations ended: started %v", len(s.end), n, s.start)
	}
	return s.start, s.end
}

// A group queued behind another does not start its first item alone in the
// slot a fast failure freed: it starts it beside its second, when the next
// slot frees.
func TestAGroupsFirstItemWaitsForASecondFreeSlot(t *testing.T) {
	ev := newSpanEvaluator(map[string]time.Duration{"fast": 5 * time.Millisecond, "slow": 800 * time.Millisecond, "b": 50 * time.Millisecond})
	start, end := ev.run(t, []string{"A fast", "A slow"}, []string{"B b 0", "B b 1"})
	t.Logf("starts %v, ends %v", start, end)
	if start["B b 0"] < end["A slow"]-100*time.Millisecond {
		t.Fatalf("B's first item started at %v, alone beside A's slow one (ended %v)", start["B b 0"], end["A slow"])
	}
	if gap := start["B b 1"] - start["B b 0"]; gap > 300*time.Millisecond || gap < -300*time.Millisecond {
		t.Fatalf("B's items started %v apart; want together", gap)
	}
}

// The wait is bounded: a slot stays idle at most gangHold for a group.
func TestAGroupsFirstItemWaitsAtMostGangHold(t *testing.T) {
	defer func(h time.Duration) { gangHold = h }(gangHold)
	gangHold = 300 * time.Millisecond
	ev := newSpanEvaluator(map[string]time.Duration{"fast": 5 * time.Millisecond, "slow": 3 * time.Second, "b": 50 * time.Millisecond})
	start, _ := ev.run(t, []string{"A fast", "A slow"}, []string{"B b 0", "B b 1"})
	if s := start["B b 0"]; s < 250*time.Millisecond || s > 2*time.Second {
		t.Fatalf("B's first item started at %v; want after the 300 ms hold and long before A's slow item ends (3 s)", s)
	}
}

// A batch of one item (a search's step, a single reward) is never held: it
// has no second item to start beside.
func TestASingleItemBatchIsNotHeld(t *testing.T) {
	ev := newSpanEvaluator(map[string]time.Duration{"fast": 5 * time.Millisecond, "slow": 800 * time.Millisecond, "c": 5 * time.Millisecond})
	start, end := ev.run(t, []string{"A fast", "A slow"}, []string{"C c"})
	if start["C c"] > end["A slow"]-400*time.Millisecond {
		t.Fatalf("the one-item batch started at %v, waiting for A's slow item (ended %v)", start["C c"], end["A slow"])
	}
}
