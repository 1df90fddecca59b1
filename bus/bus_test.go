package bus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"

	"github.com/nats-io/nats-server/v2/server"
)

// startTestBus opens a Bus on an embedded server with its store in a fresh
// t.TempDir() (unless opts.DataDir is set) and closes it when t ends.
func startTestBus(t *testing.T, opts Options) *Bus {
	t.Helper()
	if opts.DataDir == "" && opts.URL == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.NakDelay == 0 {
		opts.NakDelay = 50 * time.Millisecond // keep redelivery tests fast
	}
	b, err := Open(t.Context(), opts, kgtest.Logger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// runInBackground runs f in a goroutine under a ctx cancelled at cleanup (or
// by the returned cancel) and, at cleanup, fails t if f returned an error.
func runInBackground(t *testing.T, f func(ctx context.Context) error) (cancel func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("background consumer: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("background consumer did not return after cancel")
		}
	})
	return cancel
}

func TestCloseTwice(t *testing.T) {
	b, err := Open(t.Context(), Options{DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close()
}

func TestOpenExternalUnreachable(t *testing.T) {
	// Port 1 on loopback refuses connections: Open must fail, not hang.
	_, err := Open(t.Context(), Options{URL: "nats://127.0.0.1:1", ReadyTimeout: time.Second}, nil)
	if err == nil {
		t.Fatal("Open on an unreachable URL succeeded")
	}
}

// The --nats URL path: a separate server listening on a random port.
func TestOpenExternal(t *testing.T) {
	srv := startExternalServer(t, -1, t.TempDir())
	b := startTestBus(t, Options{URL: srv.ClientURL()})
	if err := b.PublishJob(t.Context(), "jobs.cpu", "j", nil); err != nil {
		t.Fatal(err)
	}
	wantDepth(t, b, 1)
}

// startExternalServer starts a JetStream server of its own on port (-1: a
// random one), storing under dir, as `--nats` would reach one.
func startExternalServer(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(5 * time.Second) {
		t.Fatal("external server not ready")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

func TestRestartKeepsEvents(t *testing.T) {
	dir := t.TempDir()
	b1, err := Open(t.Context(), Options{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := b1.PublishEvent(t.Context(), "events.evaluation", id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	b1.Close()

	b2 := startTestBus(t, Options{DataDir: dir})
	got := collectEvents(t, b2, "sink", 3)
	if len(got) != 3 || got[0].ID != "a" || got[2].ID != "c" {
		t.Fatalf("after restart got %+v, want events a, b, c", got)
	}
}

// One embedded store, one process: a second Open on the same data
// directory is refused with who holds it, and the first's Close frees it.
func TestDataDirectoryHasOneOwner(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(t.Context(), Options{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), Options{DataDir: dir}, nil)
	if err == nil || !strings.Contains(err.Error(), "in use by another kernelgate process (pid") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v", err)
	}
	first.Close()
	again, err := Open(t.Context(), Options{DataDir: dir}, nil)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// An embedded server told to listen takes workers from other processes, and
// only with its token.
func TestEmbeddedServerListensWithAToken(t *testing.T) {
	gw := startTestBus(t, Options{Listen: "127.0.0.1:0", Token: "tok"})
	addr := gw.ListenAddr()
	if addr == "" {
		t.Fatal("no listen address")
	}
	if _, err := Open(t.Context(), Options{URL: "nats://" + addr, ReadyTimeout: 2 * time.Second}, nil); err == nil ||
		!strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("Open without the token = %v, want an authorization error", err)
	}
	remote := startTestBus(t, Options{URL: "nats://" + addr, Token: "tok"})
	if err := remote.PublishJob(t.Context(), "jobs.gpu", "j1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := gw.QueueDepth(t.Context()); err != nil || n != 1 {
		t.Fatalf("the gateway's queue after a remote publish: %d, %v", n, err)
	}
	if startTestBus(t, Options{}).ListenAddr() != "" {
		t.Fatal("an embedded server that was not told to listen has an address")
	}
}
