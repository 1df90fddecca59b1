package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// collectEvents consumes durable until n events have been acked and returns
// them in delivery order.
func collectEvents(t *testing.T, b *Bus, durable string, n int) []Event {
	t.Helper()
	var mu sync.Mutex
	var got []Event
	stop := runInBackground(t, func(ctx context.Context) error {
		return b.Events(ctx, durable, 10, 100*time.Millisecond, func(_ context.Context, evs []Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, evs...)
			return nil
		})
	})
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < n {
			return fmt.Errorf("%d events, want %d", len(got), n)
		}
		return nil
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(got)
}

// wantAllAcked waits until durable has nothing pending or unacked.
func wantAllAcked(t *testing.T, b *Bus, durable string) {
	t.Helper()
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		c, err := b.js.Consumer(t.Context(), EventsStream, durable)
		if err != nil {
			return err
		}
		info, err := c.Info(t.Context())
		if err != nil {
			return err
		}
		if info.NumPending != 0 || info.NumAckPending != 0 {
			return fmt.Errorf("pending %d, ack pending %d", info.NumPending, info.NumAckPending)
		}
		return nil
	})
}

func TestEventDedup(t *testing.T) {
	b := startTestBus(t, Options{})
	for range 2 {
		if err := b.PublishEvent(t.Context(), "events.evaluation", "ev-1", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	s, err := b.js.Stream(t.Context(), EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("EVENTS holds %d messages, want 1", info.State.Msgs)
	}
	if got := collectEvents(t, b, "sink", 1); got[0].ID != "ev-1" || got[0].Subject != "events.evaluation" {
		t.Fatalf("event = %+v", got[0])
	}
}

func TestEventsBatching(t *testing.T) {
	b := startTestBus(t, Options{})
	for i := range 25 {
		if err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprintf("ev-%02d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var sizes []int
	total := 0
	runInBackground(t, func(ctx context.Context) error {
		return b.Events(ctx, "sink", 10, 200*time.Millisecond, func(_ context.Context, evs []Event) error {
			mu.Lock()
			defer mu.Unlock()
			sizes = append(sizes, len(evs))
			total += len(evs)
			return nil
		})
	})
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if total != 25 {
			return fmt.Errorf("handled %d events, want 25", total)
		}
		return nil
	})
	wantAllAcked(t, b, "sink")
	mu.Lock()
	defer mu.Unlock()
	for _, n := range sizes {
		if n > 10 {
			t.Fatalf("batch sizes %v: one exceeds 10", sizes)
		}
	}
	if len(sizes) < 3 || sizes[0] != 10 {
		t.Fatalf("batch sizes %v, want 10,10,5 or finer", sizes)
	}
}

func TestEventsRedeliveredOnError(t *testing.T) {
	b := startTestBus(t, Options{})
	for i := range 3 {
		if err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprintf("ev-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var batches [][]Event
	runInBackground(t, func(ctx context.Context) error {
		return b.Events(ctx, "sink", 10, 200*time.Millisecond, func(_ context.Context, evs []Event) error {
			mu.Lock()
			defer mu.Unlock()
			batches = append(batches, evs)
			if len(batches) == 1 {
				return errors.New("disk full")
			}
			return nil
		})
	})
	// Consumer info can read "nothing pending" before the first fetch and while a
	// nak'd batch waits out its delay: wait for the redelivery itself first.
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(batches) < 2 {
			return fmt.Errorf("%d batches so far", len(batches))
		}
		return nil
	})
	wantAllAcked(t, b, "sink")
	mu.Lock()
	defer mu.Unlock()
	ids := func(evs []Event) (s []string) {
		for _, e := range evs {
			s = append(s, e.ID)
		}
		slices.Sort(s)
		return s
	}
	if len(batches) < 2 {
		t.Fatalf("got %d batches, want a failed one and a redelivery", len(batches))
	}
	var again []Event
	for _, bt := range batches[1:] {
		again = append(again, bt...)
	}
	if !slices.Equal(ids(batches[0]), ids(again)) {
		t.Fatalf("redelivered %v, want %v", ids(again), ids(batches[0]))
	}
	for _, e := range again {
		if e.NumDelivered != 2 {
			t.Fatalf("redelivered event %s has NumDelivered %d, want 2", e.ID, e.NumDelivered)
		}
	}
}

// A sink that stops leaves no pull request behind: an event published
// right after reaches the next sink at once, not after EventAckWait in a
// dead inbox (a restarted export sink once waited 20 s for one this way).
func TestEventsStopLeavesNoPullRequest(t *testing.T) {
	b := startTestBus(t, Options{})
	got := make(chan Event, 10)
	consume := func(ctx context.Context) error {
		return b.Events(ctx, "sink", 10, time.Second, func(_ context.Context, evs []Event) error {
			for _, e := range evs {
				got <- e
			}
			return nil
		})
	}
	for i := range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- consume(ctx) }()
		time.Sleep(300 * time.Millisecond) // a fetch is open on the server
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		c, err := b.js.Consumer(t.Context(), EventsStream, "sink")
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.NumWaiting != 0 {
			t.Fatalf("stop %d: %d pull requests left on the server", i, info.NumWaiting)
		}
		id := fmt.Sprintf("ev-%d", i)
		if err := b.PublishEvent(t.Context(), "events.evaluation", id, nil); err != nil {
			t.Fatal(err)
		}
		next := runInBackground(t, consume)
		select {
		case e := <-got:
			if e.ID != id || e.NumDelivered != 1 {
				t.Fatalf("got %s delivered %d times, want %s once", e.ID, e.NumDelivered, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("stop %d: %s not delivered to the next sink within 5 s", i, id)
		}
		next()
		time.Sleep(1500 * time.Millisecond) // the next sink's own fetch ends
	}
}
