package gateway

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// A batch the queue refuses halfway leaves nothing queued: the jobs queued
// before the refused item are taken back (no worker runs, so none is taken
// by one first), and a batch that fits is still taken whole afterwards.
func TestRefusedBatchLeavesNothingQueued(t *testing.T) {
	b := startBus(t, bus.Options{MaxQueuedJobs: 2})
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t)})
	rec := do(t, srv.Handler(), http.MethodPost, "/v1/rewards",
		body(t, map[string]any{"reference": ref, "codes": []string{"a", "b", "c"}, "wait_s": 0}))
	wantError(t, rec, http.StatusTooManyRequests, CodeQueueFull, "", "2 of 3 items queued")
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n, err := b.QueueDepth(t.Context()); err != nil || n != 0 {
			return fmt.Errorf("queue depth %d, %v after a refused batch; want 0", n, err)
		}
		return nil
	})
	rec = do(t, srv.Handler(), http.MethodPost, "/v1/rewards",
		body(t, map[string]any{"reference": ref, "codes": []string{"d", "e"}, "wait_s": 0}))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("a batch that fits after the refused one: %d %s", rec.Code, rec.Body)
	}
	if n, err := b.QueueDepth(t.Context()); err != nil || n != 2 {
		t.Fatalf("queue depth %d, %v; want the 2 jobs of the batch that fit", n, err)
	}
}
