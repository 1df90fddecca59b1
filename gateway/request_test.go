package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate"
	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

const ref = "import torch\nclass Model(torch.nn.Module):\n    pass\n"

func body(t *testing.T, v map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRewardRequestErrors(t *testing.T) {
	srv := New(Config{MaxBodyBytes: 1 << 20, MaxItems: 8}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	many := make([]string, 9)
	tests := []struct {
		name      string
		body      []byte
		status    int
		code      Code
		field     string
		inMessage string
	}{
		{"malformed JSON", []byte(`{"reference": `), 400, CodeBadJSON, "", "malformed JSON"},
		{"not an object", []byte(`[1]`), 400, CodeBadJSON, "", "malformed JSON"},
		{"wrong type", []byte(`{"reference": 3}`), 400, CodeBadJSON, "reference", "string"},
		{"unknown field", []byte(`{"referense": "x"}`), 400, CodeBadJSON, "referense", "unknown field"},
		{"trailing data", []byte(`{"reference": "x"} {}`), 400, CodeBadJSON, "", "trailing"},
		{"no task", body(t, map[string]any{"codes": []string{"x"}}), 400, CodeInvalidRequest, "reference", "task is required"},
		{"both task forms", body(t, map[string]any{"task_id": "1", "reference": ref, "codes": []string{"x"}}), 400, CodeInvalidRequest, "task_id", "not both"},
		{"unknown task", body(t, map[string]any{"task_id": "19_gemm", "codes": []string{"x"}}), 404, CodeTaskNotFound, "task_id", "reference"},
		{"no items", body(t, map[string]any{"reference": ref}), 400, CodeInvalidRequest, "codes", "at least one"},
		{"empty completions", body(t, map[string]any{"reference": ref, "completions": []string{}}), 400, CodeInvalidRequest, "completions", "at least one"},
		{"both item forms", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "completions": []string{"y"}}), 400, CodeInvalidRequest, "completions", "not both"},
		{"too many items", body(t, map[string]any{"reference": ref, "completions": many}), 400, CodeTooManyItems, "completions", "at most 8"},
		{"unknown reward_fn", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "reward_fn": "speed"}), 400, CodeUnknownRewardFn, "reward_fn", "adaexplore, binary, kernelgym_tiered, kevin, log_speedup"},
		{"option out of range", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "options": map[string]any{"seeds": 0}}), 400, CodeInvalidOptions, "options.seeds", "seeds must be in 1..100"},
		{"unknown option", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "options": map[string]any{"seedz": 3}}), 400, CodeInvalidOptions, "options.seedz", "unknown field"},
		{"option of the wrong type", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "options": map[string]any{"timeout_s": "long"}}), 400, CodeInvalidOptions, "options.timeout_s", "options"},
		{"negative wait", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "wait_s": -1}), 400, CodeInvalidRequest, "wait_s", "0..3600"},
		{"zero deadline", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "deadline_s": 0}), 400, CodeInvalidRequest, "deadline_s", "(0, 3600]"},
		{"deadline over an hour", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "deadline_s": 3601}), 400, CodeInvalidRequest, "deadline_s", "(0, 3600]"},
		{"huge wait", body(t, map[string]any{"reference": ref, "codes": []string{"x"}, "wait_s": 1e300}), 400, CodeInvalidRequest, "wait_s", "0..3600"},
		{"finish_reason not text", body(t, map[string]any{"reference": ref, "completions": []string{"x", "y"}, "finish_reasons": []any{"length", 7}}), 400, CodeInvalidRequest, "finish_reasons[1]", "a finish reason is a string"},
		{"body too large", body(t, map[string]any{"reference": strings.Repeat("x", 2<<20), "codes": []string{"x"}}), 413, CodeBodyTooLarge, "", "exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, srv.Handler(), http.MethodPost, "/v1/rewards", tt.body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			checkSpec(t, http.MethodPost, "/v1/rewards", rec)
			e := decodeError(t, rec)
			if e.Code != tt.code || e.Field != tt.field || !strings.Contains(e.Message, tt.inMessage) {
				t.Errorf("error %+v, want code %s field %q message containing %q", e, tt.code, tt.field, tt.inMessage)
			}
		})
	}
}

// Every code in the table has a status, and the table is the only source.
func TestErrorTable(t *testing.T) {
	for code, status := range errorTable {
		e := newError(code, "f", "m")
		if e.status != status || e.Code != code || status < 400 {
			t.Errorf("%s: %+v", code, e)
		}
	}
	if e := newError("made_up", "", "m"); e.Code != CodeInternal || e.status != http.StatusInternalServerError {
		t.Errorf("unknown code: %+v", e)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	ready := errors.New("no zygote is up")
	srv := New(Config{}, Deps{Ready: func() error { return ready }, Log: kgtest.Logger(t)})
	rec := do(t, srv.Handler(), http.MethodGet, "/healthz", nil)
	if rec.Code != 200 {
		t.Fatalf("healthz %d", rec.Code)
	}
	checkSpec(t, http.MethodGet, "/healthz", rec)
	rec = do(t, srv.Handler(), http.MethodGet, "/readyz", nil)
	if rec.Code != 503 || decodeError(t, rec).Code != CodeNotReady {
		t.Fatalf("readyz before: %d %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodGet, "/readyz", rec)
	ready = nil
	rec = do(t, srv.Handler(), http.MethodGet, "/readyz", nil)
	if rec.Code != 200 {
		t.Fatalf("readyz after: %d %s", rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodGet, "/readyz", rec)

	for _, tt := range []struct {
		method, path string
		status       int
		code         Code
	}{
		{http.MethodGet, "/nope", 404, CodeNotFound},
		{http.MethodGet, "/v1/rewards", 405, CodeMethodNotAllowed},
	} {
		rec := do(t, srv.Handler(), tt.method, tt.path, nil)
		if rec.Code != tt.status || decodeError(t, rec).Code != tt.code {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, rec.Code, rec.Body)
		}
	}
}

// A full queue answers 429 with Retry-After; jobs are never evaluated here
// (no worker runs), so nothing is faked.
func TestQueueFull(t *testing.T) {
	b := startBus(t, bus.Options{MaxQueuedJobs: 1})
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t)})
	rec := do(t, srv.Handler(), http.MethodPost, "/v1/rewards", body(t, map[string]any{"reference": ref, "codes": []string{"a", "b"}, "wait_s": 5}))
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	if e := decodeError(t, rec); e.Code != CodeQueueFull {
		t.Errorf("error %+v", e)
	}
}

// Past wait_s with no worker, the answer is 202 with where to look, and the
// batch reads back as running with every slot null.
func TestWaitRunsOut(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t)})
	start := time.Now()
	rec := do(t, srv.Handler(), http.MethodPost, "/v1/rewards", body(t, map[string]any{"reference": ref, "codes": []string{"a", "b"}, "wait_s": 0.2}))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s for wait_s 0.2", d)
	}
	checkSpec(t, http.MethodPost, "/v1/rewards", rec)
	var ref batchRef
	if err := json.Unmarshal(rec.Body.Bytes(), &ref); err != nil {
		t.Fatal(err)
	}
	if ref.Status != "running" || ref.Done != 0 || ref.Total != 2 || ref.Location != "/v1/batches/"+ref.BatchID || rec.Header().Get("Location") != ref.Location {
		t.Fatalf("202 %+v, Location %q", ref, rec.Header().Get("Location"))
	}
	rec = do(t, srv.Handler(), http.MethodGet, ref.Location, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", ref.Location, rec.Code, rec.Body)
	}
	checkSpec(t, http.MethodGet, "/v1/batches/{id}", rec)
	var got batchResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "running" || got.Done != 0 || got.Total != 2 || len(got.Results) != 2 || got.Results[0] != nil || got.Cached[1] != nil {
		t.Errorf("batch %s", rec.Body)
	}
}

// Completions without code go to the harness as empty code, once per batch,
// for a registered task as for an inline reference: only a worker knows
// whether the task's reference works, and a broken one is a task error
// (valid false), never the completion's.
func TestCompletionsWithoutCode(t *testing.T) {
	st := startFakeStack(t)
	texts := []string{"no code here", "```js\nconsole.log(1)\n```", "```python\n\n```"}
	for _, tt := range []struct {
		name      string
		task      map[string]any
		status    string
		valid     bool
		evaluated int
	}{
		{"registered task", map[string]any{"task_id": "ci/1_add_relu"}, "invalid_submission", true, 1},
		{"inline reference", map[string]any{"reference": ref}, "invalid_submission", true, 1},
		{"broken inline reference", map[string]any{"reference": ref + "# BROKEN\n"}, "harness_error", false, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := map[string]any{"completions": texts, "reward_fn": "kevin", "wait_s": 10}
			for k, v := range tt.task {
				req[k] = v
			}
			before := len(st.ev.jobs)
			var got batchResponse
			call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards", req, &got)
			if len(got.Results) != len(texts) || !strings.HasPrefix(got.BatchID, "b_") {
				t.Fatalf("response %+v", got)
			}
			for i, v := range got.Results {
				if v == nil || string(v.Status) != tt.status || got.Valid[i] == nil || *got.Valid[i] != tt.valid {
					t.Fatalf("item %d: %+v valid %v", i, v, got.Valid[i])
				}
				if tt.valid && !strings.Contains(v.Feedback, "no code found") {
					t.Errorf("item %d feedback %q", i, v.Feedback)
				}
			}
			st.ev.mu.Lock()
			n := len(st.ev.jobs) - before
			st.ev.mu.Unlock()
			if n != tt.evaluated {
				t.Errorf("%d evaluations, want %d", n, tt.evaluated)
			}
		})
	}
}

func TestRewardPrompts(t *testing.T) {
	cfg := Config{MaxItems: 8}.withDefaults()
	parse := func(prompts string) (batchSpec, *apiError) {
		return parseRewardRequest([]byte(`{"task_id":"ci/1_add_relu","codes":["a","b"],"prompts":`+prompts+`}`), cfg)
	}
	spec, aerr := parse(`["write it", [{"role":"system","content":"s"},{"role":"user","content":"u"}]]`)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if p := spec.promptOf(0); len(p) != 1 || p[0].Role != "user" || p[0].Content != "write it" {
		t.Errorf("prompt 0: %+v", p)
	}
	if p := spec.promptOf(1); len(p) != 2 || p[0].Role != "system" || p[1].Content != "u" {
		t.Errorf("prompt 1: %+v", p)
	}
	for _, c := range []struct{ prompts, field, want string }{
		{`["one"]`, "prompts", "1 prompts for 2 codes"},
		{`["a", [{"role":"robot","content":"x"}]]`, "prompts[1]", "role \"robot\""},
		{`["a", []]`, "prompts[1]", "non-empty list"},
		{`["a", 7]`, "prompts[1]", "string or"},
		{`["a", [{"role":"user","content":"x","extra":1}]]`, "prompts[1]", "string or"},
	} {
		_, aerr := parse(c.prompts)
		if aerr == nil || aerr.Code != CodeInvalidRequest || aerr.Field != c.field || !strings.Contains(aerr.Message, c.want) {
			t.Errorf("%s: %+v, want field %s with %q", c.prompts, aerr, c.field, c.want)
		}
	}
	if spec, aerr := parseRewardRequest([]byte(`{"task_id":"ci/1_add_relu","codes":["a"]}`), cfg); aerr != nil || spec.promptOf(0) != nil {
		t.Errorf("no prompts: %+v %v", spec.prompts, aerr)
	}
}

// finish_reasons: one per completion, each a string (any) or null.
func TestRewardFinishReasons(t *testing.T) {
	cfg := Config{MaxItems: 8}.withDefaults()
	parse := func(items, finishes string) (batchSpec, *apiError) {
		return parseRewardRequest([]byte(`{"task_id":"ci/1_add_relu",`+items+`,"finish_reasons":`+finishes+`}`), cfg)
	}
	spec, aerr := parse(`"completions":["a","b","c"]`, `["length", null, "tool_calls"]`)
	if aerr != nil {
		t.Fatal(aerr)
	}
	if got := []string{spec.finishReasonOf(0), spec.finishReasonOf(1), spec.finishReasonOf(2)}; got[0] != "length" || got[1] != "" || got[2] != "tool_calls" {
		t.Errorf("finish reasons %q", got)
	}
	for _, c := range []struct{ items, finishes, field, want string }{
		{`"completions":["a","b"]`, `["length"]`, "finish_reasons", "1 finish_reasons for 2 completions"},
		{`"codes":["a"]`, `["length"]`, "finish_reasons", "go with completions"},
		{`"completions":["a"]`, `[{"reason":"length"}]`, "finish_reasons[0]", "a finish reason is a string"},
		{`"completions":["a"]`, `[true]`, "finish_reasons[0]", "or null"},
		{`"completions":["a"]`, `["` + strings.Repeat("x", 65) + `"]`, "finish_reasons[0]", "at most 64 characters"},
	} {
		_, aerr := parse(c.items, c.finishes)
		if aerr == nil || aerr.Code != CodeInvalidRequest || aerr.Field != c.field || !strings.Contains(aerr.Message, c.want) {
			t.Errorf("%s: %+v, want field %s with %q", c.finishes, aerr, c.field, c.want)
		}
	}
	if _, aerr := parse(`"completions":["a"]`, `"length"`); aerr == nil || aerr.Code != CodeBadJSON {
		t.Errorf("a string for the list: %+v", aerr)
	}
}

// The gateway serves its contract, byte for byte the embedded openapi.yaml.
func TestServesItsOpenAPI(t *testing.T) {
	srv := New(Config{}, Deps{Log: kgtest.Logger(t)})
	rec := do(t, srv.Handler(), http.MethodGet, "/openapi.yaml", nil)
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), kernelgate.OpenAPI) ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/yaml") {
		t.Fatalf("%d %v: %.80s", rec.Code, rec.Header(), rec.Body)
	}
}
