package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/worker"
)

// A batch whose results the store lost, after the real zygote judged it and
// the sink logged it, is answered from the log: done, with those verdicts,
// and its stream ends.
func TestABatchWhoseResultsWereLostIsAnsweredFromTheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	dataDir := t.TempDir()
	b, sup, log := startParts(t, dataDir)
	svc := &dispatch.Service{Bus: b, Mode: sup.Mode, Poll: 100 * time.Millisecond, Stall: testStall, Log: log}
	srv := New(Config{}, Deps{Bus: b, Ready: func() error { return worker.Ready(sup) }, TimingMode: sup.Mode,
		Evals: svc, Log: log, Exports: Exports{DataDir: dataDir}})
	h := srv.Handler()
	hs := httptest.NewServer(h)
	defer hs.Close()

	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py") + "\n# settle\n"
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	rec := post(t, h, "/v1/rewards", map[string]any{"reference": readFile(t, "datasets/ci/1_add_relu.py"),
		"codes": []string{honest, wrong}, "reward_fn": "binary", "options": map[string]any{"seeds": 2, "timing": false}, "wait_s": 300})
	if rec.Code != http.StatusOK {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	before := decodeBatch(t, rec)
	wantStatuses(t, before, eval.StatusCorrect, eval.StatusIncorrect)
	kgtest.CheckFor(t, time.Minute, 100*time.Millisecond, func() error {
		rows, err := dataset.BatchRows(log, dataDir, before.BatchID, before.CreatedAt)
		if err != nil || len(rows) < 2 {
			return fmt.Errorf("%d rows logged (%v)", len(rows), err)
		}
		return nil
	})
	for i := range 2 {
		if err := b.DeleteResult(t.Context(), before.BatchID, i); err != nil {
			t.Fatal(err)
		}
	}

	rec = do(t, h, http.MethodGet, batchLocation(before.BatchID), nil)
	checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
	got := decodeBatch(t, rec)
	wantStatuses(t, got, eval.StatusCorrect, eval.StatusIncorrect)
	if !slices.Equal(got.FromLog, []int{0, 1}) || len(got.LostItems) != 0 {
		t.Fatalf("from_log %v, lost_items %v; want [0 1] and none", got.FromLog, got.LostItems)
	}
	for i := range 2 {
		if *got.Rewards[i] != *before.Rewards[i] || *got.Valid[i] != *before.Valid[i] ||
			got.Results[i].CodeHash != before.Results[i].CodeHash || got.Results[i].Feedback != before.Results[i].Feedback {
			t.Errorf("item %d from the log: reward %v valid %v %+v; was %v %v %+v", i, *got.Rewards[i], *got.Valid[i],
				got.Results[i], *before.Rewards[i], *before.Valid[i], before.Results[i])
		}
	}
	lines, status := readStream(t, hs.URL, before.BatchID)
	if len(lines) != 2 || !lines[0].FromLog || !lines[1].FromLog || status != statusDone {
		t.Errorf("stream: %d lines, trailer %q; want 2 from_log lines and done", len(lines), status)
	}
}
