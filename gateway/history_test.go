package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/gateway/history"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// The results a gateway observes land in GET /v1/stats/history with their
// batch's reward function; a task check does not; the spec holds.
func TestHistoryCountsObservedResults(t *testing.T) {
	doc := loadSpec(t)
	kgtest.SchemaMatches(t, doc, "History", reflect.TypeFor[history.View]())
	kgtest.SchemaMatches(t, doc, "HistoryTask", reflect.TypeFor[history.Task]())
	kgtest.SchemaMatches(t, doc, "RewardStats", reflect.TypeFor[history.RewardStats]())
	kgtest.SchemaMatches(t, doc, "RewardHistogram", reflect.TypeFor[history.Histogram]())
	kgtest.SchemaMatches(t, doc, "HistoryRebuilt", reflect.TypeFor[history.Rebuilt]())
	kgtest.SchemaMatches(t, doc, "BatchSummary", reflect.TypeFor[batchSummary]())

	srv, _, _ := startFake(t, Config{})
	stop, err := srv.observeResults(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	defer srv.startHistory(t.Context())() // its sample also counts results that came before their batch's record
	h := srv.Handler()
	rec := post(t, h, "/v1/rewards", map[string]any{"reference": ref, "reward_fn": "binary", "codes": []string{"ok 1", "wrong 2", "ok 3", "slow 4"}, "wait_s": 10})
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	srv.historyAdd(result(t, `{"id":"t_check-00000","verdict":{"status":"correct","task_hash":"sha256:k","task_info":{}}}`))
	var v history.View
	kgtest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		v = history.View{}
		if rec := call(t, h, http.MethodGet, "/v1/stats/history?window=1h", "/v1/stats/history", nil, &v); rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if v.Evaluations < 4 || v.Rewards["binary"].Count < 4 {
			return fmt.Errorf("%d evaluations counted, %d rewards", v.Evaluations, v.Rewards["binary"].Count)
		}
		return nil
	})
	if v.Evaluations != 4 || v.Verdicts["correct"] != 2 || v.Verdicts["incorrect"] != 1 || v.Verdicts["timeout"] != 1 {
		t.Errorf("verdicts %v of %d", v.Verdicts, v.Evaluations)
	}
	if r := v.Rewards["binary"]; r.Count != 4 || r.Mean != 0.5 {
		t.Errorf("binary rewards %+v", r)
	}
	var day history.View
	call(t, h, http.MethodGet, "/v1/stats/history?window=24h", "/v1/stats/history", nil, &day)
	if len(day.Tasks) != 1 || day.Tasks[0].TaskHash != eval.HashSource(ref) || day.Tasks[0].PassRate != 0.5 || day.StepS != 60 {
		t.Errorf("tasks %+v", day.Tasks)
	}
	wantError(t, call(t, h, http.MethodGet, "/v1/stats/history?window=7d", "/v1/stats/history", nil, nil),
		http.StatusBadRequest, CodeInvalidRequest, "window", "1h, 24h")
}

// The history needs the admin scope, as the rest of /v1/stats.
func TestHistoryNeedsAdmin(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"ops": "admin", "trainer": "reward"})
	h := New(Config{}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)}).Handler()
	if rec := request(t, h, "GET", "/v1/stats/history", "Bearer "+keys["trainer"], nil); rec.Code != http.StatusForbidden {
		t.Errorf("a reward key: %d", rec.Code)
	}
	if rec := request(t, h, "GET", "/v1/stats/history", "Bearer "+keys["ops"], nil); rec.Code != http.StatusOK {
		t.Errorf("an admin key: %d %s", rec.Code, rec.Body)
	}
	if rec := request(t, h, "GET", "/v1/batches", "Bearer "+keys["ops"], nil); rec.Code != http.StatusForbidden {
		t.Errorf("the batch list with an admin key: %d, want 403 (reward scope)", rec.Code)
	}
}

// A batch's record is stored once its items are queued, so a result can
// come first: it waits for the record, then counts with its reward; one
// whose record never comes counts without a reward after a while.
func TestHistoryResultBeforeItsRecord(t *testing.T) {
	srv, b, _ := startFake(t, Config{})
	srv.historyAdd(result(t, `{"id":"b_early-00000","reward":1,"verdict":{"status":"correct","task_hash":"sha256:e"}}`))
	if v, _ := srv.history.View("1h"); v.Evaluations != 0 {
		t.Fatalf("counted before its record: %d", v.Evaluations)
	}
	rec, _ := json.Marshal(batchRecord{ID: "b_early", Total: 1, CreatedAt: time.Now(), RewardFn: "binary", TaskHash: "sha256:e"})
	if err := b.PutBatch(t.Context(), "b_early", rec); err != nil {
		t.Fatal(err)
	}
	srv.retryWaiting()
	if v, _ := srv.history.View("1h"); v.Evaluations != 1 || v.Rewards["binary"].Count != 1 {
		t.Errorf("after its record: %d evaluations, rewards %+v", v.Evaluations, v.Rewards)
	}
	// A search's evaluation has no record to wait for: counted at once.
	srv.historyAdd(result(t, `{"id":"s_0123456789abcdef-3","reward":1,"verdict":{"status":"compile_error","task_hash":"sha256:s"}}`))
	if v, _ := srv.history.View("1h"); v.Verdicts["compile_error"] != 1 || srv.hasWaiting() {
		t.Errorf("a search's evaluation waited: %v", v.Verdicts)
	}
	srv.historyAdd(result(t, `{"id":"b_never-00000","reward":1,"verdict":{"status":"incorrect","task_hash":"sha256:n"}}`))
	srv.batchMemo.mu.Lock()
	srv.batchMemo.waiting[0].at = time.Now().Add(-2 * maxRecordWait)
	srv.batchMemo.mu.Unlock()
	srv.retryWaiting()
	if v, _ := srv.history.View("1h"); v.Evaluations != 3 || v.Verdicts["incorrect"] != 1 || v.Rewards["binary"].Count != 1 || srv.hasWaiting() {
		t.Errorf("a record that never comes: %d evaluations, %v, rewards %+v", v.Evaluations, v.Verdicts, v.Rewards)
	}
}
