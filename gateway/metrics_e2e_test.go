package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// After one real evaluation (CPU mode, real zygote) /metrics shows it:
// evaluations by status, stage latencies, the queue, HTTP requests by
// route and code, the worker's busy share; and /v1/gpus says cpu_interpreter.
func TestEndToEndMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	srv := startServer(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	url, done := serveOn(t, srv, ctx)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	kgtest.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error { return probe(url) })

	req := map[string]any{
		"reference": readFile(t, "datasets/ci/1_add_relu.py"),
		// Twice: one run, one shared answer, which counts as a verdict but
		// adds no stage or run time of its own.
		"codes":     repeat(readFile(t, "datasets/solutions/ci/1_add_relu.py"), 2),
		"reward_fn": "binary",
		"options":   map[string]any{"seeds": 1, "timing": false, "timeout_s": 120},
		"wait_s":    60,
	}
	resp, err := http.Post(url+"/v1/rewards", "application/json", strings.NewReader(string(body(t, req))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rewards: %d", resp.StatusCode)
	}
	want := []string{
		`kernelgate_evaluations_total{status="correct"} 2`,
		`kernelgate_evaluations_total{status="incorrect"} 0`,
		`kernelgate_evaluation_stage_seconds_count{stage="correctness"} 1`,
		`kernelgate_evaluation_exec_seconds_count 1`,
		`kernelgate_queue_depth 0`,
		`kernelgate_ready 1`,
		`kernelgate_http_requests_total{code="200",method="POST",route="/v1/rewards"} 1`,
		`kernelgate_http_request_duration_seconds_count{method="POST",route="/v1/rewards"} 1`,
		`kernelgate_worker_busy_ratio{device="cpu"} 0`,
		`kernelgate_worker_slots{device="cpu"} 2`,
	}
	// The observer counts the result beside the request's own waiter: poll.
	kgtest.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		_, metrics := get(t, url+"/metrics")
		for _, w := range want {
			if !strings.Contains(metrics, "\n"+w+"\n") {
				return fmt.Errorf("no %s in /metrics", w)
			}
		}
		if strings.Contains(metrics, "kernelgate_gpu_") {
			return fmt.Errorf("GPU series in CPU mode")
		}
		return nil
	})

	status, gpus := get(t, url+"/v1/gpus")
	if status != http.StatusOK || !strings.Contains(gpus, `"mode":"cpu_interpreter"`) || !strings.Contains(gpus, `"gpus":[]`) ||
		!strings.Contains(gpus, `"concurrency":2`) {
		t.Errorf("/v1/gpus %d: %s", status, gpus)
	}
}
