package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func startBus(t *testing.T) *bus.Bus {
	t.Helper()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir(), NakDelay: 50 * time.Millisecond}, kgtest.Logger(t))
	if err != nil {
		t.Fatalf("bus.Open: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// runBackground runs f until the returned stop is called (or the test
// ends) and fails the test if f returns an error.
func runBackground(t *testing.T, f func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	var once atomic.Bool
	stop = func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("background: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("background did not return after cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

func publish(t *testing.T, b *bus.Bus, subject, id string, v any) {
	t.Helper()
	data, ok := v.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PublishEvent(t.Context(), subject, id, data); err != nil {
		t.Fatal(err)
	}
}

// waitRows polls until table holds want rows (never more).
func waitRows[T any](t *testing.T, root, table string, want int) {
	t.Helper()
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := len(readTable[T](t, root, table)); n != want {
			return fmt.Errorf("%s: %d rows, want %d", table, n, want)
		}
		return nil
	})
}

func TestRunEndToEnd(t *testing.T) {
	b := startBus(t)
	root := t.TempDir()
	s := newTestSink(t, root)
	stop := runBackground(t, func(ctx context.Context) error { return s.Run(ctx, b) })

	now := time.Now()
	for i := range 20 {
		id := fmt.Sprintf("e%02d", i)
		publish(t, b, event.SubjectEvaluation, id, evalEvent(id, now))
	}
	publish(t, b, event.SubjectEvaluation, "e00", evalEvent("e00", now)) // a retried publish
	publish(t, b, event.SubjectEpisodeStep, "s1", stepEvent("s1", now))
	publish(t, b, event.SubjectEvaluation, "bad", []byte("not json"))
	publish(t, b, "events.future_table", "k1", map[string]string{"rule": "x"})

	waitRows[Evaluation](t, root, TableEvaluations, 20)
	waitRows[EpisodeStep](t, root, TableEpisodeSteps, 1)
	waitRows[Rejected](t, root, TableRejected, 1)
	stop()
	wantOnlyParts(t, root)
	got := readTable[Evaluation](t, root, TableEvaluations)
	if !reflect.DeepEqual(got[0], EvaluationRow(evalEvent(got[0].EventID, now))) {
		t.Fatalf("row %+v does not match its event", got[0])
	}

	// A new sink on the same durable and root: everything was acked, so
	// nothing is written again.
	s2 := newTestSink(t, root)
	stop2 := runBackground(t, func(ctx context.Context) error { return s2.Run(ctx, b) })
	publish(t, b, event.SubjectEvaluation, "e20", evalEvent("e20", now))
	waitRows[Evaluation](t, root, TableEvaluations, 21)
	stop2()
}

// The crash the dedup exists for: files renamed, process gone before the
// ack. The batch is redelivered to a new sink, which writes nothing twice.
func TestCrashBetweenRenameAndAck(t *testing.T) {
	b := startBus(t)
	root := t.TempDir()
	first, second := newTestSink(t, root), newTestSink(t, root)
	now := time.Now()
	for i := range 5 { // published before the consumer starts: one batch
		id := fmt.Sprintf("e%d", i)
		publish(t, b, event.SubjectEvaluation, id, evalEvent(id, now))
	}
	var calls, redone atomic.Int32
	var firstBatch atomic.Int32
	stop := runBackground(t, func(ctx context.Context) error {
		return b.Events(ctx, Durable, BatchSize, 200*time.Millisecond, func(ctx context.Context, evs []bus.Event) error {
			if calls.Add(1) == 1 {
				firstBatch.Store(int32(len(evs)))
				if err := first.Handle(ctx, evs); err != nil {
					return err
				}
				return errors.New("crashed after rename") // no ack: redelivered
			}
			err := second.Handle(ctx, evs) // the restarted process
			if err == nil {
				redone.Add(int32(len(evs)))
			}
			return err
		})
	})
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := redone.Load(); n < firstBatch.Load() || n == 0 {
			return fmt.Errorf("%d events handled after the crash, want %d", n, firstBatch.Load())
		}
		return nil
	})
	stop()
	got := eventIDs(readTable[Evaluation](t, root, TableEvaluations))
	if want := []string{"e0", "e1", "e2", "e3", "e4"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("event ids %v, want %v (each exactly once)", got, want)
	}
}
