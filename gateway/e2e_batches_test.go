package gateway

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// Batches that outlive their request, the stream and the result cache,
// through the real zygote in CPU mode (one stack for every step).
func TestEndToEndBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	dataDir := t.TempDir()
	h := startStack(t, dataDir)
	hs := httptest.NewServer(h)
	defer hs.Close()

	task := readFile(t, "datasets/ci/1_add_relu.py")
	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py")
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	if wrong == honest {
		t.Fatal("could not make the wrong kernel")
	}
	// Each step marks its kernels so no step is answered from another's cache.
	mark := func(code, step string) string { return code + "\n# " + step + "\n" }
	opts := map[string]any{"seeds": 2, "timing": false, "timeout_s": 120}
	request := func(extra map[string]any) map[string]any {
		req := map[string]any{"reference": task, "reward_fn": "binary", "options": opts}
		for k, v := range extra {
			req[k] = v
		}
		return req
	}

	t.Run("wait_s 0, then GET until done", func(t *testing.T) {
		rec := post(t, h, "/v1/rewards", request(map[string]any{
			"codes": []string{mark(honest, "a"), mark(wrong, "a"), mark(honest, "a2")}, "wait_s": 0}))
		if rec.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		checkSpec(t, http.MethodPost, "/v1/rewards", rec)
		got := getBatchUntilDone(t, h, decodeRef(t, rec).BatchID)
		wantStatuses(t, got, eval.StatusCorrect, eval.StatusIncorrect, eval.StatusCorrect)
		if *got.Rewards[0] != 1 || *got.Rewards[1] != 0 || got.Results[0].TaskHash != eval.HashSource(task) {
			t.Errorf("batch %+v", got)
		}
	})

	t.Run("stream yields every index once", func(t *testing.T) {
		rec := post(t, h, "/v1/rewards", request(map[string]any{"wait_s": 0, "completions": []string{
			"```python\n" + mark(honest, "s") + "```", "no code here", "```python\n" + mark(wrong, "s") + "```"}}))
		id := decodeRef(t, rec).BatchID
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		lines := newLineReader(t, stream(t, ctx, hs.URL, id).Body)
		got := map[int]eval.Status{}
		for l, ok := lines.next(); ok; l, ok = lines.next() {
			if _, dup := got[l.Index]; dup {
				t.Errorf("index %d streamed twice", l.Index)
			}
			got[l.Index] = l.Result.Status
		}
		lines.checkSpec()
		want := map[int]eval.Status{0: eval.StatusCorrect, 1: eval.StatusInvalidSubmission, 2: eval.StatusIncorrect}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("streamed %v, want %v", got, want)
		}
	})

	var cachedBatch, bypassBatch string
	t.Run("cache hit, then bypass", func(t *testing.T) {
		req := request(map[string]any{"codes": []string{mark(honest, "c"), mark(wrong, "c")}, "wait_s": 120})
		sync := func(req map[string]any) (batchResponse, time.Duration) {
			start := time.Now()
			rec := post(t, h, "/v1/rewards", req)
			took := time.Since(start)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			checkSpec(t, http.MethodPost, "/v1/rewards", rec)
			return decodeBatch(t, rec), took
		}
		first, cold := sync(req)
		second, warm := sync(req)
		req["cache"] = false
		third, _ := sync(req)
		t.Logf("evaluated in %s, from the cache in %s", cold, warm)
		for i, b := range []batchResponse{first, second, third} {
			wantStatuses(t, b, eval.StatusCorrect, eval.StatusIncorrect)
			if want := i == 1; *b.Cached[0] != want || *b.Cached[1] != want {
				t.Errorf("request %d: cached %v %v, want %v", i, *b.Cached[0], *b.Cached[1], want)
			}
			// Both deadlines' measures on every evaluated verdict; none on a cached one.
			for j, v := range b.Results {
				evaluated := v.ExecMS != nil && *v.ExecMS > 0 && v.QueueWaitMS != nil && *v.QueueWaitMS >= 0
				if evaluated != (i != 1) || (i == 1 && (v.ExecMS != nil || v.QueueWaitMS != nil)) {
					t.Errorf("request %d item %d: exec_ms %v queue_wait_ms %v", i, j, v.ExecMS, v.QueueWaitMS)
				}
			}
		}
		if warm > cold/2 {
			t.Errorf("the cached answer took %s, the evaluated one %s", warm, cold)
		}
		cachedBatch, bypassBatch = second.BatchID, third.BatchID
	})

	t.Run("evaluation", func(t *testing.T) {
		rec := post(t, h, "/v1/evaluations", map[string]any{"reference": task, "code": mark(honest, "e"), "options": opts, "wait_s": 120})
		checkSpec(t, http.MethodPost, "/v1/evaluations", rec)
		if e := decodeEvaluation(t, rec); rec.Code != http.StatusOK || e.Result == nil || e.Result.Status != eval.StatusCorrect {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})

	t.Run("unknown batch", func(t *testing.T) {
		rec := do(t, h, http.MethodGet, "/v1/batches/b_UNKNOWN", nil)
		checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
		if rec.Code != http.StatusNotFound || decodeError(t, rec).Code != CodeBatchNotFound {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})

	// Cached answers still reach the Parquet log, marked.
	root := filepath.Join(dataDir, "parquet", "table="+export.TableEvaluations)
	kgtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		rows, err := readEvaluations(root)
		if err != nil {
			return err
		}
		var cached, bypass []bool
		for _, r := range rows {
			switch r.BatchID {
			case cachedBatch:
				cached = append(cached, r.Cached && r.QueueWaitMS == nil)
			case bypassBatch:
				bypass = append(bypass, r.Cached || r.QueueWaitMS == nil)
			}
		}
		if !slices.Equal(cached, []bool{true, true}) || !slices.Equal(bypass, []bool{false, false}) {
			return fmt.Errorf("rows of the cached batch (cached, no queue time): %v; of the bypass (cached or no queue time): %v", cached, bypass)
		}
		return nil
	})
}

// readEvaluations reads every evaluations row under root.
func readEvaluations(root string) ([]export.Evaluation, error) {
	var rows []export.Evaluation
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".parquet" {
			return err
		}
		rs, err := parquet.ReadFile[export.Evaluation](path)
		rows = append(rows, rs...)
		return err
	})
	return rows, err
}
