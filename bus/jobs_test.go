package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func wantDepth(t *testing.T, b *Bus, want uint64) {
	t.Helper()
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		d, err := b.QueueDepth(t.Context())
		if err != nil {
			return err
		}
		if d != want {
			return fmt.Errorf("queue depth %d, want %d", d, want)
		}
		return nil
	})
}

func TestJobHandledOnceAndAcked(t *testing.T) {
	b := startTestBus(t, Options{})
	var calls atomic.Int32
	got := make(chan Delivery, 4)
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(_ context.Context, j Delivery) error {
			calls.Add(1)
			got <- j
			return nil
		})
	})
	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-1", []byte("payload")); err != nil {
		t.Fatal(err)
	}
	wantDepth(t, b, 0)
	j := <-got
	if j.ID != "job-1" || j.Subject != "jobs.gpu" || string(j.Data) != "payload" || j.NumDelivered != 1 || j.Final {
		t.Fatalf("job = %+v", j)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler called %d times, want 1", n)
	}
}

func TestJobRedeliveredAfterError(t *testing.T) {
	b := startTestBus(t, Options{})
	var mu sync.Mutex
	var deliveries []uint64
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(_ context.Context, j Delivery) error {
			mu.Lock()
			deliveries = append(deliveries, j.NumDelivered)
			mu.Unlock()
			if j.NumDelivered == 1 {
				return errors.New("transient failure")
			}
			return nil
		})
	})
	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-1", nil); err != nil {
		t.Fatal(err)
	}
	wantDepth(t, b, 0)
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(deliveries) != "[1 2]" {
		t.Fatalf("deliveries = %v, want [1 2]", deliveries)
	}
}

// A worker that stops (its ctx is cancelled) while its handler hangs never
// acks; a new worker on the same durable gets the job after AckWait.
func TestJobRedeliveredAfterWorkerDies(t *testing.T) {
	// Nothing announces a redelivery after AckWait: the next recheck finds it.
	b := startTestBus(t, Options{JobAckWait: time.Second, JobRecheck: 500 * time.Millisecond})
	first := make(chan time.Time, 1)
	release := make(chan struct{})
	stopFirst := runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(context.Context, Delivery) error {
			first <- time.Now()
			<-release // hung: ignores its ctx, never returns in time
			return errors.New("died")
		})
	})
	t.Cleanup(func() { close(release) }) // runs before stopFirst's cleanup

	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-1", nil); err != nil {
		t.Fatal(err)
	}
	var delivered time.Time
	select {
	case delivered = <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("first worker never got the job")
	}
	stopFirst()

	second := make(chan Delivery, 1)
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(_ context.Context, j Delivery) error {
			second <- j
			return nil
		})
	})
	select {
	case j := <-second:
		if j.NumDelivered != 2 {
			t.Fatalf("redelivered job has NumDelivered %d, want 2", j.NumDelivered)
		}
		if since := time.Since(delivered); since < 900*time.Millisecond {
			t.Fatalf("redelivered after %s, before AckWait", since)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("job was not redelivered to the second worker")
	}
	wantDepth(t, b, 0)
}

// A worker that shuts down hands its running job back at once, with a
// wake-up: the next worker gets it within moments, not after AckWait (a
// minute here) nor after JobRecheck.
func TestJobHandedBackOnShutdown(t *testing.T) {
	b := startTestBus(t, Options{})
	started := make(chan struct{}, 1)
	stopFirst := runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(ctx context.Context, _ Delivery) error {
			started <- struct{}{}
			<-ctx.Done() // the evaluation is killed with the worker
			return ctx.Err()
		}, WithConcurrency(2))
	})
	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-1", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("first worker never got the job")
	}
	stopFirst()

	second := make(chan Delivery, 1)
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(_ context.Context, j Delivery) error {
			second <- j
			return nil
		})
	})
	select {
	case j := <-second:
		if j.ID != "job-1" {
			t.Fatalf("got %s", j.ID)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the job was not handed to the next worker")
	}
	wantDepth(t, b, 0)
}

// A handler that runs past AckWait keeps its job: no redelivery meanwhile.
func TestJobKeptAliveWhileRunning(t *testing.T) {
	b := startTestBus(t, Options{JobAckWait: time.Second})
	var calls atomic.Int32
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(ctx context.Context, j Delivery) error {
			calls.Add(1)
			t.Logf("%s delivery %d", time.Now().Format("05.000"), j.NumDelivered)
			select {
			case <-time.After(1600 * time.Millisecond): // the "evaluation"
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, WithConcurrency(2))
	})
	if err := b.PublishJob(t.Context(), "jobs.gpu", "slow", nil); err != nil {
		t.Fatal(err)
	}
	wantDepth(t, b, 0)
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler called %d times, want 1 (job redelivered while running)", n)
	}
}

func TestJobConcurrencyBound(t *testing.T) {
	b := startTestBus(t, Options{})
	var inFlight, peak, done atomic.Int32
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(context.Context, Delivery) error {
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(50 * time.Millisecond) // simulated work, not a wait for state
			inFlight.Add(-1)
			done.Add(1)
			return nil
		}, WithConcurrency(2))
	})
	for i := range 6 {
		if err := b.PublishJob(t.Context(), "jobs.gpu", fmt.Sprintf("job-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	wantDepth(t, b, 0)
	if done.Load() != 6 || peak.Load() > 2 {
		t.Fatalf("done %d (want 6), peak in flight %d (want <= 2)", done.Load(), peak.Load())
	}
}

func TestQueueFull(t *testing.T) {
	b := startTestBus(t, Options{MaxQueuedJobs: 3})
	ctx := t.Context()
	for i := range 3 {
		if err := b.PublishJob(ctx, "jobs.gpu", fmt.Sprintf("job-%d", i), nil); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	if err := b.PublishJob(ctx, "jobs.gpu", "job-3", nil); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("4th PublishJob = %v, want ErrQueueFull", err)
	}
	// A retried publish of an accepted job is a duplicate, not a new job.
	if err := b.PublishJob(ctx, "jobs.gpu", "job-0", nil); err != nil {
		t.Fatalf("duplicate of a queued job = %v, want nil", err)
	}
	wantDepth(t, b, 3)
}

func TestPublishJobBadInput(t *testing.T) {
	b := startTestBus(t, Options{})
	tests := []struct{ name, subject, id string }{
		{"wrong subject", "events.x", "id"},
		{"empty id", "jobs.gpu", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := b.PublishJob(t.Context(), tt.subject, tt.id, nil); err == nil {
				t.Fatal("PublishJob succeeded")
			}
		})
	}
}
