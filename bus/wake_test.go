package bus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// cpuWorkerQueues are as many queues, in the same tiers, as a CPU worker
// pulls (dispatch.Queues with torch and triton versions): interactive ones,
// four lanes taking turns, and the "requires" ones.
func cpuWorkerQueues() []Queue {
	var qs []Queue
	for i, s := range []string{"", ".torch", ".triton", ".torch.triton"} {
		qs = append(qs, Queue{Durable: fmt.Sprintf("int%d", i), Filter: "jobs.int" + s})
	}
	for i := range 4 {
		qs = append(qs, Queue{Durable: fmt.Sprintf("lane%d", i), Filter: fmt.Sprintf("jobs.eval.lane%d", i), Group: "lanes"})
	}
	for _, s := range []string{"torch", "triton", "torchtriton"} {
		qs = append(qs, Queue{Durable: "req-" + s, Filter: "jobs.eval." + s})
	}
	return qs
}

// An idle loop asks the server for jobs once per queue every JobRecheck and
// nothing more: for a CPU worker's 11 queues at the default 5 s, 2.2
// requests a second (a poll of every queue each second, plus a pull left
// waiting on the last, was 12). Counted on the server's side: every fetch
// is a request on $JS.API.CONSUMER.MSG.NEXT.JOBS.<durable>.
func TestAnIdleLoopAsksEachQueueOncePerRecheck(t *testing.T) {
	b := startTestBus(t, Options{})
	var asked atomic.Int64
	sub, err := b.nc.Subscribe("$JS.API.CONSUMER.>", func(*nats.Msg) { asked.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	queues := cpuWorkerQueues()
	runInBackground(t, func(ctx context.Context) error {
		return b.PrioritizedJobs(ctx, queues, 2, func(context.Context, Delivery) error { return nil })
	})
	time.Sleep(time.Second) // the consumers are made and the first round is done
	before := asked.Load()
	const window = 10 * time.Second
	time.Sleep(window)
	n := asked.Load() - before
	// Two rechecks fall in the window, three if it starts just before one.
	bound := int64(window/DefaultJobRecheck+1) * int64(len(queues))
	t.Logf("an idle loop over %d queues asked %d times in %s (%.1f/s); bound %d", len(queues), n, window, float64(n)/window.Seconds(), bound)
	if n > bound || n < int64(len(queues)) {
		t.Fatalf("%d requests in %s, want %d to %d: one per queue every %s", n, window, len(queues), bound, DefaultJobRecheck)
	}
}

// A job that becomes available without a wake-up (a lost one; a job
// redelivered after AckWait) still starts, within JobRecheck.
func TestAJobWithoutAWakeUpStartsWithinJobRecheck(t *testing.T) {
	b := startTestBus(t, Options{JobRecheck: 500 * time.Millisecond})
	got := make(chan time.Time, 1)
	runInBackground(t, func(ctx context.Context) error {
		return b.PrioritizedJobs(ctx, cpuWorkerQueues(), 1, func(context.Context, Delivery) error { got <- time.Now(); return nil })
	})
	time.Sleep(200 * time.Millisecond) // the loop waits
	t0 := time.Now()
	if _, err := b.js.Publish(t.Context(), "jobs.eval.lane2", nil, jetstream.WithMsgID("silent")); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		if d := at.Sub(t0); d > 500*time.Millisecond+300*time.Millisecond {
			t.Fatalf("started %s after it was queued, want within JobRecheck", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a job queued without a wake-up never started")
	}
}

// A job handed back with a delay (its handler failed) starts again when the
// delay ends, announced by the worker that handed it back, not at the next
// recheck (a minute here).
func TestAFailedJobStartsAgainWhenItsNakDelayEnds(t *testing.T) {
	const delay = 200 * time.Millisecond
	b := startTestBus(t, Options{NakDelay: delay, JobRecheck: time.Minute})
	starts := make(chan time.Time, 2)
	runInBackground(t, func(ctx context.Context) error {
		return b.PrioritizedJobs(ctx, cpuWorkerQueues(), 1, func(_ context.Context, j Delivery) error {
			starts <- time.Now()
			if j.NumDelivered == 1 {
				return errors.New("transient failure")
			}
			return nil
		})
	})
	if err := b.PublishJob(t.Context(), "jobs.eval.lane1", "job-1", nil); err != nil {
		t.Fatal(err)
	}
	var at [2]time.Time
	for i := range at {
		select {
		case at[i] = <-starts:
		case <-time.After(10 * time.Second):
			t.Fatalf("delivery %d never started", i+1)
		}
	}
	if d := at[1].Sub(at[0]); d < delay || d > delay+300*time.Millisecond {
		t.Fatalf("started again %s after the failure, want just after the %s delay", d, delay)
	}
	wantDepth(t, b, 0)
}
