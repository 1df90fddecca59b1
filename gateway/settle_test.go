package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// stallCfg settles a batch read without progress for 50 ms.
const testStall = 50 * time.Millisecond

// queueOnlyGateway is a gateway over b with no worker: batches stay queued.
func queueOnlyGateway(t *testing.T, b *bus.Bus, cfg Config) *Server {
	mode := func() string { return eval.TimingCPUInterpreter }
	svc := &dispatch.Service{Bus: b, Mode: mode, Envs: fakeEnvs, Poll: 100 * time.Millisecond, Stall: testStall, Log: kgtest.Logger(t)}
	return New(cfg, Deps{Bus: b, Ready: func() error { return nil }, Envs: fakeEnvs, TimingMode: mode, Evals: svc, Log: kgtest.Logger(t)})
}

// queueBatch posts codes with wait_s 0 and returns the batch id.
func queueBatch(t *testing.T, h http.Handler, codes ...string) string {
	t.Helper()
	rec := post(t, h, "/v1/rewards", map[string]any{"reference": readFile(t, "datasets/ci/1_add_relu.py"),
		"codes": codes, "reward_fn": "binary", "wait_s": 0})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	return decodeRef(t, rec).BatchID
}

// dropJobs takes every queued job of batch out of JOBS, as store damage would.
func dropJobs(t *testing.T, b *bus.Bus, batch string) {
	t.Helper()
	queued, err := b.QueuedJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queued {
		if strings.HasPrefix(q.ID, batch+"-") {
			if err := b.WithdrawJob(t.Context(), q.Seq); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readStream reads a whole stream: its lines and its closing status trailer.
func readStream(t *testing.T, url, id string) ([]batchLine, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	resp := stream(t, ctx, url, id)
	lines := newLineReader(t, resp.Body)
	var got []batchLine
	for l, ok := lines.next(); ok; l, ok = lines.next() {
		got = append(got, l)
	}
	lines.checkSpec()
	if ctx.Err() != nil {
		t.Fatalf("stream of %s did not end: %d lines", id, len(got))
	}
	return got, resp.Trailer.Get(batchStatusTrailer)
}

// A batch whose queued jobs the store lost ends as lost, each item
// answered harness_error with retry lost, and its stream ends; a batch that
// only waits in the queue, read as often, stays running.
func TestABatchWhoseJobsWereLostEndsLost(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := queueOnlyGateway(t, b, Config{ResultPoll: 100 * time.Millisecond})
	h := srv.Handler()
	hs := httptest.NewServer(h)
	defer hs.Close()
	gone := queueBatch(t, h, "kernel a", "kernel b")
	waiting := queueBatch(t, h, "kernel c", "kernel d")
	dropJobs(t, b, gone)

	var got batchResponse
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		rec := do(t, h, http.MethodGet, batchLocation(gone), nil)
		checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
		if got = decodeBatch(t, rec); got.Status == statusRunning {
			return fmt.Errorf("%s still running", gone)
		}
		return nil
	})
	if got.Status != statusLost || got.Done != 2 || !slices.Equal(got.LostItems, []int{0, 1}) {
		t.Fatalf("batch %+v; want lost, lost_items [0 1]", got)
	}
	for i, v := range got.Results {
		if v.Status != eval.StatusHarnessError || v.Retry != "lost" || *got.Valid[i] {
			t.Errorf("item %d: %s retry %q valid %v; want harness_error, lost, invalid", i, v.Status, v.Retry, *got.Valid[i])
		}
	}
	lines, status := readStream(t, hs.URL, gone)
	if len(lines) != 2 || !lines[0].Lost || !lines[1].Lost || status != statusLost {
		t.Errorf("stream: %d lines, status trailer %q; want 2 lost lines and lost", len(lines), status)
	}

	time.Sleep(3 * testStall) // past the stall: the waiting batch is checked on each read below
	for range 3 {
		w := decodeBatch(t, do(t, h, http.MethodGet, batchLocation(waiting), nil))
		if w.Status != statusRunning || w.Done != 0 || len(w.LostItems) != 0 {
			t.Fatalf("queued batch %+v; want running with nothing done", w)
		}
		time.Sleep(2 * testStall)
	}
}

// A stream of a batch that stalls after it started ends once its lost
// items are found, without a new request.
func TestAStreamOfALostBatchEnds(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := queueOnlyGateway(t, b, Config{ResultPoll: 100 * time.Millisecond})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	id := queueBatch(t, srv.Handler(), "kernel e")
	type result struct {
		lines  []batchLine
		status string
	}
	done := make(chan result, 1)
	go func() { l, s := readStream(t, hs.URL, id); done <- result{l, s} }()
	time.Sleep(200 * time.Millisecond) // the stream is open and quiet
	dropJobs(t, b, id)
	select {
	case r := <-done:
		if len(r.lines) != 1 || !r.lines[0].Lost || r.status != statusLost {
			t.Errorf("stream: %+v, trailer %q", r.lines, r.status)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream did not end")
	}
}

// pausable is a TCP proxy in front of NATS that can stop passing bytes: a
// store that does not answer.
type pausable struct {
	ln     net.Listener
	mu     sync.Mutex
	paused bool
	resume chan struct{}
}

func startPausable(t *testing.T, target string) *pausable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausable{ln: ln, resume: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); p.set(false) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				return
			}
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *pausable) set(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused && !paused {
		close(p.resume)
		p.resume = make(chan struct{})
	}
	p.paused = paused
}

func (p *pausable) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		paused, resume := p.paused, p.resume
		p.mu.Unlock()
		if paused {
			<-resume
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A store that stops answering costs a batch read its StoreWait, then a
// 503 with Retry-After: never the bus's own 10 s, never a hang.
func TestASlowStoreAnswersWithinTheDeadline(t *testing.T) {
	server := startBus(t, bus.Options{Listen: "127.0.0.1:0"})
	proxy := startPausable(t, server.ListenAddr())
	b, err := bus.Open(t.Context(), bus.Options{URL: "nats://" + proxy.ln.Addr().String()}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	const wait = 300 * time.Millisecond
	srv := queueOnlyGateway(t, b, Config{StoreWait: wait})
	h := srv.Handler()
	hs := httptest.NewServer(h)
	defer hs.Close()
	id := queueBatch(t, h, "kernel f")

	proxy.set(true)
	defer proxy.set(false)
	for _, path := range []string{batchLocation(id), batchLocation(id) + "/stream"} {
		start := time.Now()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: %d, Retry-After %q; want 503 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if took > 3*wait {
			t.Errorf("%s took %s; want about StoreWait (%s)", path, took, wait)
		}
		t.Logf("%s: %d in %s", path, resp.StatusCode, took)
	}
}

// /readyz says degraded, with why, while the pass over batches left
// running goes on; the status code stays 200.
func TestReadyzSaysDegradedWhileReconciling(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := queueOnlyGateway(t, b, Config{})
	srv.reconcile.running.Store(true)
	srv.reconcile.left.Store(3)
	rec := do(t, srv.Handler(), http.MethodGet, "/readyz", nil)
	checkSpec(t, http.MethodGet, "/readyz", rec)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"degraded"`) ||
		!strings.Contains(rec.Body.String(), "3 to go") {
		t.Fatalf("readyz %d %s", rec.Code, rec.Body)
	}
	srv.reconcile.running.Store(false)
	if rec := do(t, srv.Handler(), http.MethodGet, "/readyz", nil); !strings.Contains(rec.Body.String(), `"ready"`) {
		t.Fatalf("after the pass: %s", rec.Body)
	}
}
