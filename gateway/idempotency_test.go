package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// postWith sends a JSON body with headers and checks the answer against openapi.yaml.
func postWith(t *testing.T, h http.Handler, path string, body any, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(data))
	req.Host = "localhost" // a loopback gateway answers only to loopback names (doors.go)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkSpec(t, http.MethodPost, path, rec)
	return rec
}

func batchOf(t *testing.T, rec *httptest.ResponseRecorder) batchResponse {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var b batchResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeStack) evaluated() int {
	f.ev.mu.Lock()
	defer f.ev.mu.Unlock()
	return len(f.ev.jobs)
}

func TestRepeatedRequestIsAnsweredOnce(t *testing.T) {
	st := startFakeStack(t)
	body := map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD idem 1", "bad idem 1"},
		"reward_fn": "binary", "cache": false}
	for _, hdr := range []string{"Idempotency-Key", "X-Request-ID"} {
		t.Run(hdr, func(t *testing.T) {
			key := map[string]string{hdr: "trainer-step-" + strings.ToLower(hdr)}
			first := batchOf(t, postWith(t, st.h, "/v1/rewards", body, key))
			n := st.evaluated()
			rec := postWith(t, st.h, "/v1/rewards", body, key)
			again := batchOf(t, rec)
			if again.BatchID != first.BatchID || *again.Rewards[0] != 1 || *again.Rewards[1] != 0 {
				t.Errorf("repeat answered batch %s %v, first %s", again.BatchID, again.Rewards, first.BatchID)
			}
			if rec.Header().Get("Idempotent-Replayed") != "true" {
				t.Errorf("no Idempotent-Replayed header: %v", rec.Header())
			}
			if st.evaluated() != n {
				t.Errorf("the repeat evaluated %d items again", st.evaluated()-n)
			}
			// Without the key the same body is a new request.
			other := batchOf(t, postWith(t, st.h, "/v1/rewards", body, nil))
			if other.BatchID == first.BatchID || st.evaluated() != n+2 {
				t.Errorf("a request without a key got batch %s (first %s), %d evaluated", other.BatchID, first.BatchID, st.evaluated()-n)
			}
		})
	}
}

func TestIdempotencyKeyRules(t *testing.T) {
	st := startFakeStack(t)
	body := map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD rules"}, "reward_fn": "binary"}
	key := map[string]string{"Idempotency-Key": "k-rules"}
	first := batchOf(t, postWith(t, st.h, "/v1/rewards", body, key))

	changed := map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD rules, changed"}, "reward_fn": "binary"}
	wantError(t, postWith(t, st.h, "/v1/rewards", changed, key), http.StatusUnprocessableEntity, CodeKeyReused,
		"Idempotency-Key", first.BatchID)

	// One key on another endpoint is another request.
	ev := postWith(t, st.h, "/v1/evaluations", map[string]any{"task_id": "ci/1_add_relu", "code": "GOOD rules"}, key)
	if ev.Code != http.StatusOK || ev.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("evaluation with the rewards key: %d %v %s", ev.Code, ev.Header(), ev.Body)
	}
	again := postWith(t, st.h, "/v1/evaluations", map[string]any{"task_id": "ci/1_add_relu", "code": "GOOD rules"}, key)
	if again.Code != http.StatusOK || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("repeated evaluation: %d %v %s", again.Code, again.Header(), again.Body)
	}

	wantError(t, postWith(t, st.h, "/v1/rewards", body, map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}),
		http.StatusBadRequest, CodeInvalidRequest, "Idempotency-Key", "255")
	wantError(t, postWith(t, st.h, "/v1/rewards", body, map[string]string{"Idempotency-Key": "tab\there"}),
		http.StatusBadRequest, CodeInvalidRequest, "Idempotency-Key", "printable")

	// A refused request claims nothing: the same key then runs a valid one.
	fresh := map[string]string{"Idempotency-Key": "k-after-400"}
	wantError(t, postWith(t, st.h, "/v1/rewards", map[string]any{"task_id": "ci/1_add_relu"}, fresh),
		http.StatusBadRequest, CodeInvalidRequest, "codes")
	ok := postWith(t, st.h, "/v1/rewards", body, fresh)
	if ok.Code != http.StatusOK || ok.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("after a 400 the key ran: %d %v %s", ok.Code, ok.Header(), ok.Body)
	}
}

// A repeat of a request that answered 202 (wait_s 0) names the same batch:
// 202 while it runs, 200 with its verdicts once done.
func TestRepeatOfARunningBatch(t *testing.T) {
	st := startFakeStack(t)
	body := map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD running"}, "wait_s": 0}
	key := map[string]string{"Idempotency-Key": "k-running"}
	a := postWith(t, st.h, "/v1/rewards", body, key)
	if a.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", a.Code, a.Body)
	}
	first := decodeRef(t, a).BatchID
	b := postWith(t, st.h, "/v1/rewards", body, key)
	var got struct {
		BatchID string `json:"batch_id"`
	}
	if err := json.Unmarshal(b.Body.Bytes(), &got); err != nil || (b.Code != http.StatusOK && b.Code != http.StatusAccepted) {
		t.Fatalf("repeat: %d %v: %s", b.Code, err, b.Body)
	}
	if got.BatchID != first {
		t.Errorf("repeat named batch %s, first %s", got.BatchID, first)
	}
}
