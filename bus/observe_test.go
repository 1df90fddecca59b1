package bus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// Two observers in one queue group share the messages (each is received
// once); a plain subscriber still receives all of them.
func TestObserve(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	var obs []*Subscription
	for range 2 {
		o, err := b.Observe(ctx, "results.>", "metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer o.Unsubscribe()
		obs = append(obs, o)
	}
	waiter, err := b.Subscribe(ctx, "results.b1")
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Unsubscribe()
	const n = 20
	for i := range n {
		if err := b.Notify(ctx, fmt.Sprintf("results.b%d", i%2+1), fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for _, o := range obs {
		for {
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			data, err := o.Next(wctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got[string(data)]++
		}
	}
	if len(got) != n {
		t.Errorf("observers received %d distinct messages, want %d", len(got), n)
	}
	for m, c := range got {
		if c != 1 {
			t.Errorf("%s received %d times", m, c)
		}
	}
	for i := 0; i < n; i += 2 {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		data, err := waiter.Next(wctx)
		cancel()
		if err != nil || string(data) != fmt.Sprintf("m%d", i) {
			t.Fatalf("waiter: %q %v", data, err)
		}
	}
}

func TestObserveRefuses(t *testing.T) {
	b := startTestBus(t, Options{})
	for _, tt := range []struct{ pattern, queue string }{
		{"", "q"}, {">", "q"}, {"jobs.>", "q"}, {"events.evaluation", "q"}, {"a b", "q"},
		{"results.>", ""}, {"results.>", "a.b"}, {"results.>", "*"},
	} {
		if s, err := b.Observe(t.Context(), tt.pattern, tt.queue); err == nil {
			s.Unsubscribe()
			t.Errorf("Observe(%q, %q) accepted", tt.pattern, tt.queue)
		}
	}
}

// The backlog counts what a durable consumer has not acked, and is the
// whole stream before the consumer exists.
func TestEventsBacklog(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	for i := range 3 {
		if err := b.PublishEvent(ctx, "events.x", fmt.Sprintf("e%d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.EventsBacklog(ctx, "sink"); n != 3 || err != nil {
		t.Fatalf("before the consumer exists: %d %v", n, err)
	}
	collectEvents(t, b, "sink", 3)
	wantAllAcked(t, b, "sink")
	if n, err := b.EventsBacklog(ctx, "sink"); n != 0 || err != nil {
		t.Fatalf("after acks: %d %v", n, err)
	}
	if err := b.PublishEvent(ctx, "events.x", "e3", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	// The server counts a consumer's pending messages as the stream tells
	// it of new ones, a moment after the publish is acknowledged.
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n, err := b.EventsBacklog(ctx, "sink"); n != 1 || err != nil {
			return fmt.Errorf("one new event: %d %v", n, err)
		}
		return nil
	})
}
