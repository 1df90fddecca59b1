package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/worker"
)

// realPython finds the interpreter like the binary does; without one the
// test skips, unless KERNELGATE_REQUIRE_PYTHON=1 (CI), where it fails.
func realPython(t *testing.T) string {
	t.Helper()
	py, err := harness.ResolvePython(os.Getenv(harness.EnvPython))
	if err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	return py
}

// startStack wires what `kernelgate serve` wires, in process: embedded bus,
// real Supervisor (CPU mode, real zygote), worker, Parquet sink, gateway.
func startStack(t *testing.T, dataDir string) http.Handler {
	t.Helper()
	return startServer(t, dataDir).Handler()
}

// startServer is startStack's gateway itself, for tests that Serve it.
func startServer(t *testing.T, dataDir string) *Server {
	t.Helper()
	b, sup, log := startParts(t, dataDir)
	reg, eps := stackDeps(t, b) // e2e_tasks_test.go
	return New(Config{}, Deps{Bus: b, Ready: func() error { return worker.Ready(sup) }, TimingMode: sup.Mode,
		GPUs: sup, Log: log, Tasks: reg, Episodes: eps})
}

// startParts starts what serves the gateway: the embedded bus, a real
// Supervisor (CPU mode, real zygote), a worker and the Parquet sink, all
// stopped when the test ends.
func startParts(t *testing.T, dataDir string) (*bus.Bus, *harness.Supervisor, *slog.Logger) {
	t.Helper()
	py := realPython(t)
	log := kgtest.Logger(t)
	b, err := bus.Open(t.Context(), bus.Options{DataDir: dataDir}, log)
	if err != nil {
		t.Fatal(err)
	}
	sup := harness.New(harness.Config{Python: py, Device: "cpu", Concurrency: 2, CacheDir: t.TempDir()}, log)
	sctx, scancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer scancel()
	if err := sup.Start(sctx); err != nil {
		b.Close()
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") != "1" {
			t.Skipf("python %s cannot run the zygote: %v", py, err)
		}
		t.Fatal(err)
	}
	sink, err := export.NewSink(filepath.Join(dataDir, "parquet"), "e2e", log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	eg, gctx := errgroup.WithContext(ctx)
	eg.Go(func() error { return worker.Run(gctx, b, sup, log) })
	eg.Go(func() error { return sink.Run(gctx, b) })
	t.Cleanup(func() {
		cancel()
		if err := eg.Wait(); err != nil {
			t.Errorf("stack: %v", err)
		}
		sup.Close()
		b.Close()
	})
	return b, sup, log
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestEndToEndRewards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	dataDir := t.TempDir()
	h := startStack(t, dataDir)

	rec := do(t, h, http.MethodGet, "/readyz", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("readyz %d: %s", rec.Code, rec.Body)
	}
	task := readFile(t, "datasets/ci/1_add_relu.py")
	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py")
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	if wrong == honest {
		t.Fatal("could not make the wrong kernel")
	}
	req := map[string]any{
		"reference": task,
		"completions": []string{
			"Here is the kernel:\n```python\n" + honest + "\n```\n",
			"I am sorry, I cannot write a Triton kernel for this.",
			"```python\n" + wrong + "\n```",
		},
		"reward_fn": "binary",
		"options":   map[string]any{"seeds": 2, "timing": false, "timeout_s": 120},
		"wait_s":    45,
	}
	srv := httptest.NewServer(h) // over a real socket, as a trainer calls it
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/rewards", "application/json", strings.NewReader(string(body(t, req))))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rec = httptest.NewRecorder()
	rec.Code = resp.StatusCode
	for k, v := range resp.Header {
		rec.Header()[k] = v
	}
	if _, err := rec.Body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	var got batchResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status eval.Status
		reward float64
	}{
		{eval.StatusCorrect, 1},
		{eval.StatusInvalidSubmission, 0},
		{eval.StatusIncorrect, 0},
	}
	if len(got.Results) != len(want) || len(got.Rewards) != len(want) {
		t.Fatalf("%d results, %d rewards, want %d", len(got.Results), len(got.Rewards), len(want))
	}
	for i, w := range want {
		v, r := got.Results[i], got.Rewards[i]
		if v == nil || r == nil {
			t.Fatalf("item %d missing", i)
		}
		if v.Status != w.status || *r != w.reward {
			t.Errorf("item %d: status %s reward %v, want %s %v; feedback: %.500s", i, v.Status, *r, w.status, w.reward, v.Feedback)
		}
		if v.TaskHash != eval.HashSource(task) {
			t.Errorf("item %d: task_hash %s", i, v.TaskHash)
		}
	}

	// Every verdict, the gateway's invalid_submission included, lands in Parquet once.
	root := filepath.Join(dataDir, "parquet", "table="+export.TableEvaluations)
	kgtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		rows, err := countRows(root)
		if err != nil {
			return err
		}
		if rows != len(want) {
			return fmt.Errorf("%d rows under %s, want %d", rows, root, len(want))
		}
		return nil
	})
}

// countRows counts the rows of every Parquet file under root.
func countRows(root string) (int, error) {
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".parquet" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return err
		}
		n += int(pf.NumRows())
		return nil
	})
	return n, err
}
