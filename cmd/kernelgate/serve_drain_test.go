package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// call sends method url with the key and returns status and body.
func call(method, url, key, body string) (int, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // a body of another type is 415
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

// TestServeDrains runs `kernelgate serve` (real zygote, CPU mode, keys on):
// on the signal /readyz turns 503 at once, the evaluation in flight still
// answers 200, serve exits 0, and its verdict is in Parquet by then (the
// sink is flushed before it stops).
func TestServeDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	if _, err := harness.ResolvePython(os.Getenv(harness.EnvPython)); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	data := t.TempDir()
	key, _, err := apikey.NewFile(data).Create("ci", []apikey.Scope{apikey.Reward, apikey.Admin})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv(harness.EnvCacheDir, t.TempDir())
	t.Setenv(harness.EnvConcurrency, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", strings.TrimPrefix(url, "http://"), "--data", data, "--device", "cpu",
			"--drain-delay", "1s", "--shutdown-timeout", "60s"}, &stdout, &stderr)
	}()
	kgtest.CheckFor(t, 90*time.Second, 100*time.Millisecond, func() error {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d before ready; stderr %s", code, stderr.String())
		default:
		}
		if code, _, err := call("GET", url+"/readyz", "", ""); err != nil || code != http.StatusOK {
			return fmt.Errorf("readyz %d %v", code, err)
		}
		return nil
	})
	if code, _, _ := call("POST", url+"/v1/rewards", "", "{}"); code != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", code)
	}

	task, _ := os.ReadFile("../../datasets/ci/1_add_relu.py")
	sol, _ := os.ReadFile("../../datasets/solutions/ci/1_add_relu.py")
	req, _ := json.Marshal(map[string]any{"reference": string(task), "codes": []string{string(sol)},
		"reward_fn": "binary", "options": map[string]any{"seeds": 3, "timing": false}, "wait_s": 60})
	type answer struct {
		code int
		body string
		err  error
	}
	inflight := make(chan answer, 1)
	go func() {
		code, body, err := call("POST", url+"/v1/rewards", key, string(req))
		inflight <- answer{code, body, err}
	}()
	kgtest.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		_, metrics, err := call("GET", url+"/metrics", key, "")
		if err != nil || !strings.Contains(metrics, "\n"+`kernelgate_worker_in_flight{device="cpu"} 1`) {
			return fmt.Errorf("the evaluation is not running yet (%v)", err)
		}
		return nil
	})
	cancel() // the signal
	kgtest.CheckFor(t, 2*time.Second, 10*time.Millisecond, func() error {
		if code, _, err := call("GET", url+"/readyz", "", ""); code != http.StatusServiceUnavailable {
			return fmt.Errorf("readyz %d %v, want 503", code, err)
		}
		return nil
	})
	a := <-inflight
	if a.err != nil || a.code != http.StatusOK || !strings.Contains(a.body, `"status":"correct"`) {
		t.Fatalf("in-flight request: %d %v %.500s", a.code, a.err, a.body)
	}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d after shutdown, want 0; stderr %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not shut down")
	}
	var files []string
	root := filepath.Join(data, "parquet", "table="+export.TableEvaluations)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Errorf("no Parquet file under %s after exit: the sink was not flushed", root)
	}
}
