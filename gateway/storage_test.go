package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// While the store cannot take writes, /readyz says why and a write is
// refused up front with 507 and Retry-After, queueing nothing; reads go on.
func TestStorageFullRefusesWrites(t *testing.T) {
	b := startBus(t, bus.Options{MinFree: 1 << 60}) // no disk has that much free
	srv := New(Config{}, Deps{Bus: b, Ready: func() error { return nil },
		TimingMode: func() string { return eval.TimingCPUInterpreter }, Log: kgtest.Logger(t)})
	h := srv.Handler()

	rec := do(t, h, http.MethodGet, "/readyz", nil)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "storage full", "--min-free")

	rec = post(t, h, "/v1/rewards", map[string]any{"reference": ref, "codes": []string{"ok"}, "wait_s": 0})
	wantError(t, rec, http.StatusInsufficientStorage, CodeStorageFull, "", "data directory")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("507 without Retry-After")
	}
	if n, err := b.QueueDepth(t.Context()); err != nil || n != 0 {
		t.Fatalf("queue depth %d, %v after a refused batch; want 0", n, err)
	}
	rec = do(t, h, http.MethodGet, "/v1/batches/b_none", nil)
	wantError(t, rec, http.StatusNotFound, CodeBatchNotFound, "id")
}

// storeError never makes a 500 of a store that failed.
func TestStoreError(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   Code
	}{
		{bus.ErrStorageFull, http.StatusInsufficientStorage, CodeStorageFull},
		{bus.ErrStoreTimeout, http.StatusServiceUnavailable, CodeUnavailable},
		{errTest("nats: timeout"), http.StatusServiceUnavailable, CodeUnavailable},
	} {
		e := storeError(c.err, "the queue")
		if e.status != c.status || e.Code != c.code || !strings.Contains(e.Message, "the queue") {
			t.Errorf("storeError(%v) = %d %+v, want %d %s", c.err, e.status, e, c.status, c.code)
		}
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
