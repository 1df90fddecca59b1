package bus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// A job of the first queue takes the next free slot, ahead of every bulk job
// queued before it; without one, bulk jobs flow. It holds whether the bulk
// batch was waiting when the loop started or arrived while it idled (its
// wake-ups, then the interactive job's, come while the one slot is busy).
func TestPrioritizedJobsTakeTheFirstQueueFirst(t *testing.T) {
	for _, tt := range []struct {
		name  string
		early bool // the bulk batch is queued before the loop starts
	}{{"queued before", true}, {"queued while idle", false}} {
		t.Run(tt.name, func(t *testing.T) {
			b := startTestBus(t, Options{})
			ctx := t.Context()
			bulk := func() {
				for i := range 4 {
					if err := b.PublishJob(ctx, "jobs.bulk", fmt.Sprintf("bulk-%d", i), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.early {
				bulk()
			}
			var mu sync.Mutex
			var order []string
			started := make(chan struct{}, 16)
			release := make(chan struct{})
			stop := runInBackground(t, func(ctx context.Context) error {
				return b.PrioritizedJobs(ctx, []Queue{{Durable: "hi", Filter: "jobs.hi"}, {Durable: "lo", Filter: "jobs.bulk"}}, 1,
					func(_ context.Context, j Delivery) error {
						mu.Lock()
						order = append(order, j.ID)
						mu.Unlock()
						started <- struct{}{}
						if j.ID == "bulk-0" {
							<-release // the one slot is busy while the interactive job arrives
						}
						return nil
					})
			})
			defer stop()
			if !tt.early {
				time.Sleep(100 * time.Millisecond) // the loop has looked in its queues and waits
				bulk()
			}
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("no job started")
			}
			if err := b.PublishJob(ctx, "jobs.hi", "search-1", nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			close(release)
			for range 4 {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatalf("jobs stalled: %v", order)
				}
			}
			wantDepth(t, b, 0)
			mu.Lock()
			defer mu.Unlock()
			want := []string{"bulk-0", "search-1", "bulk-1", "bulk-2", "bulk-3"}
			if fmt.Sprint(order) != fmt.Sprint(want) {
				t.Fatalf("order %v, want %v", order, want)
			}
		})
	}
}

// An idle loop starts a job on any of its queues within milliseconds of its
// queueing, whichever queue it is and however long the loop was idle: it is
// woken, not polling, and does not sit in a wait on another queue.
func TestAnIdleLoopStartsAJobOnAnyQueueAtOnce(t *testing.T) {
	b := startTestBus(t, Options{})
	got := make(chan time.Time, 1)
	queues := []Queue{
		{Durable: "hi", Filter: "jobs.hi"},
		{Durable: "lane0", Filter: "jobs.lane0", Group: "bulk"},
		{Durable: "lane1", Filter: "jobs.lane1", Group: "bulk"},
		{Durable: "req", Filter: "jobs.req"},
	}
	stop := runInBackground(t, func(ctx context.Context) error {
		return b.PrioritizedJobs(ctx, queues, 2, func(context.Context, Delivery) error { got <- time.Now(); return nil })
	})
	defer stop()
	for i := range 12 {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
		q := queues[i%len(queues)]
		t0 := time.Now()
		if err := b.PublishJob(t.Context(), q.Filter, fmt.Sprintf("job-%d", i), nil); err != nil {
			t.Fatal(err)
		}
		select {
		case at := <-got:
			if d := at.Sub(t0); d > 100*time.Millisecond {
				t.Fatalf("job %d on %s started %s after it was queued", i, q.Filter, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("job %d on %s never ran", i, q.Filter)
		}
	}
}

func TestPrioritizedJobsNeedAQueue(t *testing.T) {
	b := startTestBus(t, Options{})
	if err := b.PrioritizedJobs(t.Context(), nil, 1, func(context.Context, Delivery) error { return nil }); err == nil {
		t.Fatal("no queue accepted")
	}
}

// Queues of one group take turns: a queue that holds many jobs does not
// keep the others' few waiting behind them.
func TestQueuesOfAGroupTakeTurns(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	for i := range 6 {
		if err := b.PublishJob(ctx, "jobs.lane0", fmt.Sprintf("a-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if err := b.PublishJob(ctx, "jobs.lane1", fmt.Sprintf("b-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var order []string
	done := make(chan struct{}, 16)
	stop := runInBackground(t, func(ctx context.Context) error {
		return b.PrioritizedJobs(ctx, []Queue{
			{Durable: "hi", Filter: "jobs.hi"},
			{Durable: "lane0", Filter: "jobs.lane0", Group: "bulk"},
			{Durable: "lane1", Filter: "jobs.lane1", Group: "bulk"},
		}, 1, func(_ context.Context, j Delivery) error {
			mu.Lock()
			order = append(order, j.ID)
			mu.Unlock()
			done <- struct{}{}
			return nil
		})
	})
	defer stop()
	for range 8 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("jobs stalled: %v", order)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Whichever lane starts, b's two jobs are among the first four.
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if pos["b-0"] > 3 || pos["b-1"] > 3 || pos["a-0"] > pos["a-1"] {
		t.Fatalf("order %v: the lanes did not take turns", order)
	}
}

// A worker making its consumers while the cluster cannot answer (a node lost,
// its groups electing leaders) waits for it instead of exiting. A server that
// is down while the bus reconnects stands for the lost leader: requests time
// out until a server is back on the same port and store.
func TestPrioritizedJobsWaitForAServerThatCannotAnswerYet(t *testing.T) {
	dir := t.TempDir()
	srv := startExternalServer(t, -1, dir)
	port := srv.Addr().(*net.TCPAddr).Port
	b := startTestBus(t, Options{URL: srv.ClientURL()})
	srv.Shutdown()
	srv.WaitForShutdown()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	got := make(chan string, 1)
	go func() {
		done <- b.PrioritizedJobs(ctx, []Queue{{Durable: "late", Filter: "jobs.late"}}, 1,
			func(_ context.Context, j Delivery) error { got <- j.ID; return nil })
	}()
	// Longer than a JetStream request waits (5 s): the consumer's creation times
	// out at least once, as it did when CI's cluster lost a node.
	select {
	case err := <-done:
		t.Fatalf("returned while the server was away: %v", err)
	case <-time.After(6500 * time.Millisecond):
	}
	startExternalServer(t, port, dir)
	if err := b.PublishJob(t.Context(), "jobs.late", "j1", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != "j1" {
			t.Fatalf("handled %q, want j1", id)
		}
	case err := <-done:
		t.Fatalf("returned instead of handling the job: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the job was not handled after the server came back")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("after cancel: %v", err)
	}
}
