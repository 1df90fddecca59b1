package bus

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// A full EVENTS refuses new events (it never drops the sink's unwritten
// ones), the bus says it cannot take writes, and once the sink has written
// (acked) them they leave the stream and writes are taken again.
func TestEventsFullRefusesThenRecovers(t *testing.T) {
	b := startTestBus(t, Options{Limits: Limits{Events: minStreamBytes}})
	payload := []byte(strings.Repeat("x", 4096))
	var refused error
	stored := 0
	for i := range 64 {
		err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprintf("ev-%d", i), payload)
		if err != nil {
			refused = err
			break
		}
		stored++
	}
	if refused == nil || !IsStorageFull(refused) {
		t.Fatalf("64 events of 4 KiB into a 64 KiB EVENTS: refusal = %v, want a storage-full error", refused)
	}
	if err := b.Writable(); !errors.Is(err, ErrStorageFull) {
		t.Fatalf("Writable after a refused event = %v, want ErrStorageFull", err)
	}
	// Every stored event is still there for the sink, oldest first.
	got := collectEvents(t, b, SinkDurable, stored)
	if got[0].ID != "ev-0" || len(got) != stored {
		t.Fatalf("sink got %d events starting %q, want %d starting ev-0", len(got), got[0].ID, stored)
	}
	wantAllAcked(t, b, SinkDurable)
	kgtest.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		b.checkStorage()
		return b.Writable()
	})
	if err := b.PublishEvent(t.Context(), "events.evaluation", "ev-after", payload); err != nil {
		t.Fatalf("publish after the sink caught up: %v", err)
	}
}

// Events published before any sink ever ran are kept for it: the sink's
// consumer exists from Open on, so interest retention does not drop them.
func TestEventsKeptBeforeTheSinkRuns(t *testing.T) {
	b := startTestBus(t, Options{})
	for i := range 3 {
		if err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprintf("ev-%d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	// The consumer's pending count follows the publish acks a moment later.
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n, err := b.EventsBacklog(t.Context(), SinkDurable); err != nil || n != 3 {
			return fmt.Errorf("backlog = %d, %v; want 3", n, err)
		}
		return nil
	})
	collectEvents(t, b, SinkDurable, 3)
	wantAllAcked(t, b, SinkDurable)
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		st, err := b.js.Stream(t.Context(), EventsStream)
		if err != nil {
			return err
		}
		if n := st.CachedInfo().State.Msgs; n != 0 {
			return fmt.Errorf("EVENTS holds %d written events, want 0", n)
		}
		return nil
	})
}

// Below MinFree the data directory counts as full; the state clears by
// itself once the floor is met.
func TestMinFree(t *testing.T) {
	b := startTestBus(t, Options{MinFree: 1 << 60})
	if err := b.Writable(); err == nil || !strings.Contains(err.Error(), "--min-free") {
		t.Fatalf("Writable = %v, want the free-space floor named", err)
	}
	b.opts.MinFree = 1
	b.checkStorage()
	if err := b.Writable(); err != nil {
		t.Fatalf("Writable after space returned = %v", err)
	}
}

// The embedded JetStream stops itself when a write finds the disk full;
// the watcher starts it again once the disk takes writes, and the queue
// works with what it held.
func TestJetStreamStartedAgain(t *testing.T) {
	b := startTestBus(t, Options{})
	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.srv.ShutdownJetStream(); err != nil { // what the server does on ENOSPC
		t.Fatal(err)
	}
	b.checkStorage()
	if !b.srv.JetStreamEnabled() {
		t.Fatal("JetStream still stopped after a check with space")
	}
	if err := b.Writable(); err != nil {
		t.Fatalf("Writable = %v", err)
	}
	if err := b.PublishJob(t.Context(), "jobs.gpu", "job-2", []byte("y")); err != nil {
		t.Fatalf("publish after the restart: %v", err)
	}
	wantDepth(t, b, 2)
}

// A job whose handler fails past its last try (it could not store its
// answer) is kept and delivered again, not dropped.
func TestJobKeptPastFinal(t *testing.T) {
	b := startTestBus(t, Options{MaxDeliver: 1})
	var mu sync.Mutex
	var finals []bool
	runInBackground(t, func(ctx context.Context) error {
		return b.Jobs(ctx, "workers", func(_ context.Context, j Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			finals = append(finals, j.Final)
			if len(finals) < 3 {
				return errors.New("storing the answer failed: no space left on device")
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
	if fmt.Sprint(finals) != "[true true true]" {
		t.Fatalf("deliveries (Final) = %v, want three, all final", finals)
	}
}

func TestIsStorageFull(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("write /data/nats: no space left on device"), true},
		{fmt.Errorf("x: %w", ErrStorageFull), true},
		{errors.New("nats: timeout"), false},
		{ErrQueueFull, false},
	} {
		if got := IsStorageFull(c.err); got != c.want {
			t.Errorf("IsStorageFull(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestLimitsDefaults(t *testing.T) {
	l := Limits{Events: 1 << 20}.withDefaults(100 << 20)
	if l.Events != 1<<20 || l.Jobs != (100<<20)/100*jobsShare || l.Buckets != (100<<20)/100*bucketsShare {
		t.Fatalf("limits %+v", l)
	}
	if err := (Limits{Cache: 10}).validate(); err == nil {
		t.Fatal("a 10-byte cache limit validated")
	}
}

// A store from before interest retention (EVENTS a limits stream, here with
// no sink consumer yet) keeps every event through the switch at Open.
func TestEventsSwitchToInterestKeepsEvents(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.js.Stream(t.Context(), EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	old := st.CachedInfo().Config
	old.Retention = jetstream.LimitsPolicy
	if err := b.js.DeleteConsumer(t.Context(), EventsStream, SinkDurable); err != nil {
		t.Fatal(err)
	}
	if _, err := b.js.UpdateStream(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprintf("ev-%d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()

	b = startTestBus(t, Options{DataDir: dir})
	st, err = b.js.Stream(t.Context(), EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	if info := st.CachedInfo(); info.Config.Retention != jetstream.InterestPolicy || info.State.Msgs != 3 {
		t.Fatalf("after Open: retention %v with %d events, want interest with 3", info.Config.Retention, info.State.Msgs)
	}
	if got := collectEvents(t, b, SinkDurable, 3); len(got) != 3 {
		t.Fatalf("the sink got %d events, want 3", len(got))
	}
}

// With an external server the data directory (serve's Parquet log) is
// still watched for space.
func TestMinFreeWithAnExternalServer(t *testing.T) {
	gw := startTestBus(t, Options{Listen: "127.0.0.1:0"})
	data := filepath.Join(t.TempDir(), "data") // not made yet: serve's sink makes it on its first file
	ok := startTestBus(t, Options{URL: "nats://" + gw.ListenAddr(), DataDir: data})
	if err := ok.Writable(); err != nil {
		t.Fatalf("Writable over a data directory not made yet = %v", err)
	}
	b := startTestBus(t, Options{URL: "nats://" + gw.ListenAddr(), DataDir: t.TempDir(), MinFree: 1 << 60})
	if err := b.Writable(); err == nil || !strings.Contains(err.Error(), "--min-free") {
		t.Fatalf("Writable = %v, want the free-space floor named", err)
	}
	if err := gw.Writable(); err != nil {
		t.Fatalf("the embedded server's own Writable = %v", err)
	}
}
