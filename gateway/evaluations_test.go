package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func decodeEvaluation(t *testing.T, rec *httptest.ResponseRecorder) evaluationResponse {
	t.Helper()
	var e evaluationResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("evaluation body: %v: %s", err, rec.Body)
	}
	return e
}

func TestEvaluationSync(t *testing.T) {
	srv, _, _ := startFake(t, Config{})
	for _, tt := range []struct {
		name   string
		req    map[string]any
		status eval.Status
		reward float64
	}{
		{"code", map[string]any{"reference": ref, "code": "ok", "reward_fn": "binary", "wait_s": 10}, eval.StatusCorrect, 1},
		{"completion", map[string]any{"reference": ref, "completion": "```python\nwrong\n```", "reward_fn": "binary"}, eval.StatusIncorrect, 0},
		{"completion without code", map[string]any{"reference": ref, "completion": "sorry"}, eval.StatusInvalidSubmission, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := post(t, srv.Handler(), "/v1/evaluations", tt.req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			checkSpec(t, http.MethodPost, "/v1/evaluations", rec)
			e := decodeEvaluation(t, rec)
			if !strings.HasPrefix(e.ID, "e_") || e.Status != "done" || e.Result == nil || e.Result.Status != tt.status ||
				e.Reward == nil || *e.Reward != tt.reward || e.Cached == nil || e.Location != "" {
				t.Fatalf("evaluation %s", rec.Body)
			}
			// It reads back the same, as an evaluation and as a batch of one.
			again := do(t, srv.Handler(), http.MethodGet, evaluationLocation(e.ID), nil)
			checkSpec(t, http.MethodGet, "/v1/evaluations/{id}", again)
			if again.Code != http.StatusOK || again.Body.String() != rec.Body.String() {
				t.Errorf("GET %d %s\nPOST %s", again.Code, again.Body, rec.Body)
			}
			b := decodeBatch(t, do(t, srv.Handler(), http.MethodGet, batchLocation(e.ID), nil))
			if b.Total != 1 || b.Done != 1 || b.Results[0].Status != tt.status {
				t.Errorf("as a batch: %+v", b)
			}
		})
	}
}

// wait_s 0: 202 with a Location at once; GET answers 200 running, then done.
func TestEvaluationAccepted(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	rec := post(t, srv.Handler(), "/v1/evaluations", map[string]any{"reference": ref, "code": "hold", "wait_s": 0})
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/evaluations", rec)
	e := decodeEvaluation(t, rec)
	if e.Status != "running" || e.Result != nil || e.Reward != nil || e.Location != evaluationLocation(e.ID) || rec.Header().Get("Location") != e.Location {
		t.Fatalf("202 %s (Location %q)", rec.Body, rec.Header().Get("Location"))
	}
	rec = do(t, srv.Handler(), http.MethodGet, e.Location, nil)
	checkSpec(t, http.MethodGet, "/v1/evaluations/{id}", rec)
	if rec.Code != http.StatusOK || decodeEvaluation(t, rec).Status != "running" {
		t.Fatalf("GET while running: %d %s", rec.Code, rec.Body)
	}
	close(ev.release)
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		rec = do(t, srv.Handler(), http.MethodGet, e.Location, nil)
		checkSpec(t, http.MethodGet, "/v1/evaluations/{id}", rec)
		if got := decodeEvaluation(t, rec); got.Status != "done" || got.Result == nil || got.ExecMS == nil {
			return fmt.Errorf("GET: %s", rec.Body)
		}
		return nil
	})
}

func TestEvaluationRequestErrors(t *testing.T) {
	srv := New(Config{MaxBodyBytes: 1 << 20}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	tests := []struct {
		name, body string
		status     int
		code       Code
		field      string
	}{
		{"malformed", `{"code":`, 400, CodeBadJSON, ""},
		{"unknown field", `{"reference":"x","code":"c","codes":["c"]}`, 400, CodeBadJSON, "codes"},
		{"no candidate", `{"reference":"x"}`, 400, CodeInvalidRequest, "code"},
		{"both candidates", `{"reference":"x","code":"c","completion":"c"}`, 400, CodeInvalidRequest, "completion"},
		{"no task", `{"code":"c"}`, 400, CodeInvalidRequest, "reference"},
		{"unknown task", `{"task_id":"t","code":"c"}`, 404, CodeTaskNotFound, "task_id"},
		{"unknown reward_fn", `{"reference":"x","code":"c","reward_fn":"fast"}`, 400, CodeUnknownRewardFn, "reward_fn"},
		{"bad option", `{"reference":"x","code":"c","options":{"seeds":0}}`, 400, CodeInvalidOptions, "options.seeds"},
		{"negative wait", `{"reference":"x","code":"c","wait_s":-1}`, 400, CodeInvalidRequest, "wait_s"},
		{"cache not a bool", `{"reference":"x","code":"c","cache":"no"}`, 400, CodeBadJSON, "cache"},
		{"too large", `{"reference":"` + strings.Repeat("x", 2<<20) + `","code":"c"}`, 413, CodeBodyTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, srv.Handler(), http.MethodPost, "/v1/evaluations", []byte(tt.body))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			checkSpec(t, http.MethodPost, "/v1/evaluations", rec)
			if e := decodeError(t, rec); e.Code != tt.code || e.Field != tt.field {
				t.Errorf("error %+v, want %s on %q", e, tt.code, tt.field)
			}
		})
	}
}
