package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func decodeBatch(t *testing.T, rec *httptest.ResponseRecorder) batchResponse {
	t.Helper()
	var b batchResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("batch body: %v: %s", err, rec.Body)
	}
	return b
}

func decodeRef(t *testing.T, rec *httptest.ResponseRecorder) batchRef {
	t.Helper()
	var r batchRef
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("202 body: %v: %s", err, rec.Body)
	}
	if r.Location != batchLocation(r.BatchID) || rec.Header().Get("Location") != r.Location {
		t.Fatalf("202 location %q, header %q, batch %s", r.Location, rec.Header().Get("Location"), r.BatchID)
	}
	return r
}

// wantStatuses fails t unless b holds exactly these statuses, in order.
func wantStatuses(t *testing.T, b batchResponse, want ...eval.Status) {
	t.Helper()
	if b.Status != "done" || b.Done != len(want) || b.Total != len(want) || len(b.Results) != len(want) {
		t.Fatalf("batch %s: status %s, %d of %d done, %d results; want done with %d", b.BatchID, b.Status, b.Done, b.Total, len(b.Results), len(want))
	}
	for i, w := range want {
		if b.Results[i] == nil || b.Rewards[i] == nil || b.Cached[i] == nil {
			t.Fatalf("item %d missing", i)
		}
		if b.Results[i].Status != w {
			t.Errorf("item %d: %s, want %s", i, b.Results[i].Status, w)
		}
	}
}

// getBatchUntilDone polls GET /v1/batches/{id}, checking every answer
// against the spec, until the batch is done.
func getBatchUntilDone(t *testing.T, h http.Handler, id string) batchResponse {
	t.Helper()
	var got batchResponse
	kgtest.CheckFor(t, time.Minute, 20*time.Millisecond, func() error {
		rec := do(t, h, http.MethodGet, batchLocation(id), nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET: %d %s", rec.Code, rec.Body)
		}
		checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
		got = decodeBatch(t, rec)
		if got.Status != "done" {
			return fmt.Errorf("%d of %d done", got.Done, got.Total)
		}
		return nil
	})
	return got
}

func TestRewardsSyncInOrder(t *testing.T) {
	srv, _, _ := startFake(t, Config{})
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "reward_fn": "binary",
		"codes": []string{"wrong 0", "ok 1", "slow 2", "ok 3"}, "wait_s": 10})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	got := decodeBatch(t, rec)
	wantStatuses(t, got, eval.StatusIncorrect, eval.StatusCorrect, eval.StatusTimeout, eval.StatusCorrect)
	if *got.Rewards[1] != 1 || *got.Rewards[0] != 0 || got.RewardFn != "binary" || got.TaskName != "inline" {
		t.Errorf("batch %s", rec.Body)
	}
}

// wait_s 0 answers 202 at once; the batch then reads back, in order.
func TestRewardsWaitZero(t *testing.T) {
	srv, _, _ := startFake(t, Config{})
	codes := []string{"ok 0", "wrong 1", "ok 2"}
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "codes": codes, "wait_s": 0})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	r := decodeRef(t, rec)
	if r.Total != 3 || r.Status != "running" {
		t.Errorf("202 %+v", r)
	}
	got := getBatchUntilDone(t, srv.Handler(), r.BatchID)
	wantStatuses(t, got, eval.StatusCorrect, eval.StatusIncorrect, eval.StatusCorrect)
}

// Past wait_s, a batch with a slow item answers 202; the finished items
// are readable at once and the rest when they finish.
func TestRewardsWaitRunsOut(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "codes": []string{"ok", "hold"}, "wait_s": 0.5})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	r := decodeRef(t, rec)
	if r.Done > 1 || r.Total != 2 {
		t.Errorf("202 %+v, want at most 1 of 2 done", r)
	}
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		rec = do(t, srv.Handler(), http.MethodGet, r.Location, nil)
		checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
		b := decodeBatch(t, rec)
		if b.Status != "running" || b.Done > 1 || b.Results[1] != nil || b.Rewards[1] != nil {
			t.Fatalf("while held: %s", rec.Body)
		}
		if b.Results[0] == nil {
			return fmt.Errorf("item 0 not in yet")
		}
		return nil
	})
	close(ev.release)
	wantStatuses(t, getBatchUntilDone(t, srv.Handler(), r.BatchID), eval.StatusCorrect, eval.StatusCorrect)
}

// Shutting down answers a waiting request 202 rather than holding the drain.
func TestRewardsAnswer202OnShutdown(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		done <- post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "codes": []string{"hold"}, "wait_s": 60})
	}()
	kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if ev.callsOf("hold") == 0 {
			return fmt.Errorf("the job has not started")
		}
		return nil
	})
	srv.stop()
	select {
	case rec := <-done:
		if rec.Code != http.StatusAccepted {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting request did not answer after stop")
	}
}

func TestBatchNotFound(t *testing.T) {
	srv, _, _ := startFake(t, Config{})
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{"reference": ref, "codes": []string{"ok", "ok 2"}, "wait_s": 10})
	pair := decodeBatch(t, rec).BatchID
	for _, tt := range []struct {
		path, spec string
		code       Code
	}{
		{"/v1/batches/b_NOPE", "/v1/batches/{id}", CodeBatchNotFound},
		{"/v1/batches/b.x", "/v1/batches/{id}", CodeBatchNotFound},
		{"/v1/batches/%2A", "/v1/batches/{id}", CodeBatchNotFound},
		{"/v1/batches/b_NOPE/stream", "/v1/batches/{id}/stream", CodeBatchNotFound},
		{"/v1/evaluations/e_NOPE", "/v1/evaluations/{id}", CodeEvalNotFound},
		{"/v1/evaluations/" + pair, "/v1/evaluations/{id}", CodeEvalNotFound},
	} {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, srv.Handler(), http.MethodGet, tt.path, nil)
			if rec.Code != http.StatusNotFound {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			checkSpec(t, http.MethodGet, tt.spec, rec)
			if e := decodeError(t, rec); e.Code != tt.code || e.Field != "id" {
				t.Errorf("error %+v, want %s on id", e, tt.code)
			}
		})
	}
}

// A done batch says its makespan (the last item's queue wait + run) and its
// slowest run; a running one says neither.
func TestBatchMakespan(t *testing.T) {
	b := newBatchResponse(batchRecord{ID: "b_1", Total: 3})
	b.add(dispatch.Result{Index: 0, QueueWaitMS: 10, ExecMS: 100})
	b.add(dispatch.Result{Index: 1, QueueWaitMS: 150, ExecMS: 40})
	if b.MakespanMS != nil || b.SlowestExecMS != nil {
		t.Fatal("makespan before the batch is done")
	}
	b.add(dispatch.Result{Index: 2, Cached: true}) // answered without running
	if b.MakespanMS == nil || *b.MakespanMS != 190 || *b.SlowestExecMS != 100 {
		t.Fatalf("makespan %v, slowest %v; want 190, 100", b.MakespanMS, b.SlowestExecMS)
	}
}
