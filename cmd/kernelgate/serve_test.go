package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/harness"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeReadyAndShutdown runs `kernelgate serve` (real zygote, CPU mode):
// /readyz answers 200 once the worker is up, and a cancelled context (the
// signal) shuts it down cleanly with exit 0. Rewards end to end are covered
// by gateway's TestEndToEndRewards over the same wiring.
func TestServeReadyAndShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	if _, err := harness.ResolvePython(os.Getenv(harness.EnvPython)); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv(harness.EnvCacheDir, t.TempDir())
	t.Setenv(harness.EnvConcurrency, "1")
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--data", data, "--device", "cpu"}, &stdout, &stderr)
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", addr))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before ready; stderr %s", code, stderr.String())
		case <-time.After(100 * time.Millisecond): // polling /readyz
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 90s; stderr %s", stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(data, "nats")); err != nil {
		t.Errorf("queue store: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after shutdown, want 0; stderr %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not shut down")
	}
}
