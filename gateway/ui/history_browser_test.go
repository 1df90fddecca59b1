package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
)

// TestHistoryInChromium: after a batch of mixed verdicts on a live
// `kernelgate serve` (CPU harness), the overview shows the history, the
// reward histogram, the per-task table and the batch list, and the batch
// page its GRPO group; after a restart on the same data directory the
// history is still there, read back from the Parquet log.
func TestHistoryInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kernelgate serve, a Python zygote and Chromium")
	}
	honest := repoFile(t, "datasets/solutions/ci/1_add_relu.py")
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	hack := repoFile(t, "harness/testdata/hacks/decoy_dead_kernel.py")
	unparsable := strings.Replace(honest, "class ModelNew", "class ModelNew(:", 1)
	if wrong == honest || unparsable == honest {
		t.Fatal("the solution changed: cannot make the wrong and the unparsable kernels")
	}
	chromium(t)
	g := startServe(t, buildBinary(t), llmtest.New(t).URL())
	b := newBrowser(t, g.URL)

	var batch struct {
		BatchID string    `json:"batch_id"`
		Status  string    `json:"status"`
		Results []verdict `json:"results"`
	}
	if status := g.post(t, "/v1/rewards", map[string]any{"task_id": "ci/1_add_relu", "reward_fn": "kernelgym_tiered",
		"options": map[string]any{"seeds": 2, "timing": false}, "wait_s": 120,
		"codes": []string{honest, wrong, unparsable, hack}}, &batch); status != 200 || batch.Status != "done" {
		t.Fatalf("POST /v1/rewards: %d %+v", status, batch)
	}
	var got []string
	for _, v := range batch.Results {
		got = append(got, v.Status)
	}
	if fmt.Sprint(got) != "[correct incorrect compile_error reward_hack]" {
		t.Fatalf("verdicts %v, want correct, incorrect, compile_error, reward_hack", got)
	}

	login(t, b, g.Key)
	filled := func(when string) {
		t.Helper()
		b.open(t, "/ui/")
		b.waitFor(t, 20*time.Second, "the overview's history is filled "+when, func() string {
			switch {
			case b.count(t, "#mix rect") == 0:
				return "no bar in the verdicts-over-time chart"
			case b.count(t, `#rewards svg.hist[data-fn="kernelgym_tiered"] rect`) == 0:
				return "no reward histogram: " + b.text(t, "#rewardtable")
			case !strings.Contains(b.text(t, "#tasktable"), "ci/1_add_relu"):
				return "task table: " + b.text(t, "#tasktable")
			case !strings.Contains(b.text(t, "#batchlist"), batch.BatchID):
				return "batch list: " + b.text(t, "#batchlist")
			}
			return ""
		})
		row := b.text(t, `#tasktable tr[data-task]`)
		for _, want := range []string{"25.0%", "decoy 1"} {
			if !strings.Contains(row, want) {
				t.Errorf("%s: the task's row %q has no %q (1 of 4 correct, 1 of 4 caught as decoy)", when, row, want)
			}
		}
		if n := b.text(t, `#rewardtable tr[data-fn="kernelgym_tiered"] td:nth-child(2)`); n != "4" {
			t.Errorf("%s: %s rewards counted, want 4", when, n)
		}
	}
	filled("after the batch")
	b.shotPage(t, "history")
	// No GPU here: the GPU charts' drawing is checked on two readings of one,
	// in the page's own functions (the next poll draws over them).
	lines, err := eval[int](b, `(() => { const t = new Date(), h = {from: new Date(t - 60000).toISOString(), to: t.toISOString(), step_s: 5};
		const pts = [{t: new Date(t - 10000).toISOString(), gpus: [{index: 0, utilization_percent: 40, memory_used_bytes: 2 ** 31}]},
			{t: new Date(t - 5000).toISOString(), gpus: [{index: 0, utilization_percent: 90, memory_used_bytes: 2 ** 32}]}];
		gpuSeries("#gpuchart", h, pts, (g) => g.utilization_percent, 100);
		gpuSeries("#gpumemchart", h, pts, (g) => g.memory_used_bytes / 2 ** 30);
		return document.querySelectorAll("#gpuchart polyline, #gpumemchart polyline").length; })()`)
	if err != nil || lines != 2 {
		t.Errorf("GPU charts drew %d lines (%v), want one each", lines, err)
	}

	b.open(t, "/ui/batches/"+batch.BatchID)
	if n := b.count(t, "#group tbody tr[data-i]"); n != 4 {
		t.Errorf("the group view has %d rows, want 4", n)
	}
	sum, err := eval[float64](b, `[...document.querySelectorAll("#group tbody tr td:nth-child(3)")].reduce((a, e) => a + Number(e.textContent), 0)`)
	if err != nil || sum > 0.01 || sum < -0.01 {
		t.Errorf("the advantages sum to %g (%v), want 0", sum, err)
	}
	b.shotPage(t, "group")

	b.open(t, "/ui/batches?status=done&task=1_add_relu")
	if !strings.Contains(b.text(t, "#batchlist"), batch.BatchID) {
		t.Errorf("the batches page, filtered by status and task, lacks the batch: %s", b.text(t, "#batchlist"))
	}

	// The sink writes the batch's rows within seconds; then restart.
	kgtest.CheckFor(t, 30*time.Second, 250*time.Millisecond, func() error {
		var c struct{ Logged int }
		if code := g.get(t, "/v1/batches/"+batch.BatchID+"/code", &c); code != 200 || c.Logged != 4 {
			return fmt.Errorf("%d, %d of 4 logged", code, c.Logged)
		}
		return nil
	})
	g.restart(t)
	filled("after a restart")
	if h := b.text(t, "#history-hint"); !strings.Contains(h, "read back from the Parquet log") {
		t.Errorf("the hint does not say the history was read back: %q", h)
	}
	b.shotPage(t, "history-after-restart")
}

type verdict struct {
	Status string `json:"status"`
}

// shotPage saves the whole page, not only the viewport, as DIR/name.png.
func (b *browser) shotPage(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
		return
	}
	t.Logf("screenshot %s", path)
}

// login opens the dashboard with key through its form.
func login(t *testing.T, b *browser, key string) {
	t.Helper()
	b.open(t, "/ui/")
	b.do(t, `document.querySelector("#key").value = "`+key+`"; document.querySelector("#login").requestSubmit()`)
	b.waitFor(t, 10*time.Second, "the key opens the overview", func() string {
		if b.count(t, "#overview") != 1 {
			return "page " + b.text(t, "main")
		}
		return ""
	})
}

// get reads path with the key and decodes the answer into out.
func (g *gateway) get(t *testing.T, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}
