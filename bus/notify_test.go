package bus

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestNotifySubscribe(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	sub, err := b.Subscribe(ctx, "results.b1")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	other, err := b.Subscribe(ctx, "results.b2")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unsubscribe()
	for i := range 3 {
		if err := b.Notify(ctx, "results.b1", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := sub.Next(wctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("m%d", i); string(got) != want {
			t.Errorf("message %d: %q, want %q", i, got, want)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := other.Next(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("other subject: err %v, want deadline exceeded", err)
	}
}

func TestNotifySubjects(t *testing.T) {
	b := startTestBus(t, Options{})
	for _, tt := range []struct {
		subject string
		ok      bool
	}{
		{"results.abc", true},
		{"", false},
		{"results.*", false},
		{"results.>", false},
		{"jobs.eval", false},
		{"events.evaluation", false},
		{"wake.jobs.eval.cpu", false},
		{"a b", false},
	} {
		t.Run(tt.subject, func(t *testing.T) {
			err := b.Notify(t.Context(), tt.subject, []byte("x"))
			if (err == nil) != tt.ok {
				t.Errorf("Notify(%q): err %v, want ok=%v", tt.subject, err, tt.ok)
			}
			sub, err := b.Subscribe(t.Context(), tt.subject)
			if (err == nil) != tt.ok {
				t.Errorf("Subscribe(%q): err %v, want ok=%v", tt.subject, err, tt.ok)
			}
			if sub != nil {
				sub.Unsubscribe()
			}
		})
	}
}
