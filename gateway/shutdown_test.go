package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// heldWorker is a hand-written worker speaking the real protocol: it pulls
// jobs from the bus, reports each on took, and answers a correct verdict
// once release is closed.
func heldWorker(t *testing.T, b *bus.Bus) (took <-chan string, release func()) {
	t.Helper()
	tookc, rel := make(chan string, 16), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.Jobs(ctx, dispatch.Durable(eval.TimingGPU), func(ctx context.Context, j bus.Delivery) error {
			var job dispatch.Job
			if err := json.Unmarshal(j.Data, &job); err != nil {
				return err
			}
			tookc <- job.ID
			select {
			case <-rel:
			case <-ctx.Done():
				return ctx.Err()
			}
			v := dispatch.Verdict(eval.TimingCPUInterpreter, job, eval.StatusCorrect, "", "")
			return dispatch.PublishResult(ctx, b, job, dispatch.Result{Index: job.Index, ID: job.ID, Reward: 1, Valid: true, Verdict: v, ExecMS: 5})
		}, bus.WithConcurrency(4), bus.WithFilter(dispatch.Subject(eval.TimingGPU))) // a gateway whose mode is unknown queues for GPUs
	}()
	released := false
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	return tookc, func() {
		if !released {
			released = true
			close(rel)
		}
	}
}

// serveOn runs srv.Serve on a fresh loopback port; the returned channel
// receives Serve's result.
func serveOn(t *testing.T, srv *Server, ctx context.Context) (url string, done <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), errc
}

type answer struct {
	status int
	body   string
	err    error
}

func postReward(url string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url+"/v1/rewards", "application/json",
			strings.NewReader(`{"reference":"import torch\nclass Model: pass\n","codes":["y"],"reward_fn":"binary","wait_s":30}`))
		if err != nil {
			out <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		out <- answer{status: resp.StatusCode, body: string(body), err: err}
	}()
	return out
}

// On shutdown /readyz turns 503 at once; after DrainDelay the listener
// closes; a request in flight still gets its answer, then Serve returns nil.
func TestShutdownDrains(t *testing.T) {
	b := startBus(t, bus.Options{})
	took, release := heldWorker(t, b)
	srv := New(Config{DrainDelay: time.Second, ShutdownTimeout: 20 * time.Second},
		Deps{Bus: b, Ready: func() error { return nil }, Log: kgtest.Logger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := serveOn(t, srv, ctx)
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error { return probe(url) })

	inflight := postReward(url)
	select {
	case <-took:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker got no job")
	}
	cancel() // SIGTERM
	kgtest.CheckFor(t, 2*time.Second, 10*time.Millisecond, func() error {
		if code, err := readyz(url); code != http.StatusServiceUnavailable {
			return fmt.Errorf("readyz: %d %v, want 503", code, err)
		}
		return nil
	})
	// After DrainDelay the listener closes while the request still runs.
	kgtest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if code, err := readyz(url); err == nil {
			return fmt.Errorf("readyz: %d, want a refused connection", code)
		}
		return nil
	})
	release()
	a := <-inflight
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, `"status":"correct"`) {
		t.Fatalf("in-flight request: %d %v %s", a.status, a.err, a.body)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("still accepting connections after Serve returned")
	}
}

// A request that outlives ShutdownTimeout is cut off: Serve returns within
// the bound, and nil.
func TestShutdownIsBounded(t *testing.T) {
	b := startBus(t, bus.Options{})
	took, _ := heldWorker(t, b) // never released
	srv := New(Config{ShutdownTimeout: 300 * time.Millisecond},
		Deps{Bus: b, Ready: func() error { return nil }, Log: kgtest.Logger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := serveOn(t, srv, ctx)
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error { return probe(url) })
	inflight := postReward(url)
	<-took
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %s with a 300ms bound", d)
	}
	if a := <-inflight; a.err == nil && a.status == http.StatusOK {
		t.Errorf("the cut-off request got 200: %s", a.body)
	}
}

// readyz is GET /readyz's status; err when no answer came.
func readyz(url string) (int, error) {
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// probe is nil once /readyz answers 200.
func probe(url string) error {
	if code, err := readyz(url); code != http.StatusOK {
		return fmt.Errorf("readyz %d %v", code, err)
	}
	return nil
}
