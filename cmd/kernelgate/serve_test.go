package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
		done <- run(ctx, []string{"serve", "--addr", addr, "--data", data, "--device", "cpu", "--open",
			"--tasks", "../../datasets/ci", "--tasks", "../../datasets/level2"}, &stdout, &stderr)
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
	// Both suites are loaded, ids DIRNAME/STEM.
	for _, id := range []string{"ci/1_add_relu", "level2/1_gemm_bias_relu"} {
		resp, err := http.Get(fmt.Sprintf("http://%s/v1/tasks/%s", addr, id))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /v1/tasks/%s: %d", id, resp.StatusCode)
		}
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

// A broken --tasks or --episode-idle is a usage error, found before any
// zygote starts.
func TestServeBadTaskFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"missing suite", []string{"--tasks", "no/such/dir"}, "no such file"},
		{"one suite name twice", []string{"--tasks", "../../datasets/ci," + t.TempDir() + "/ci"}, `both suite "ci"`},
		{"zero idle", []string{"--episode-idle", "0s"}, "--episode-idle must be positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--device", "cpu"}, tt.args...)
			if code := run(t.Context(), args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}
}
