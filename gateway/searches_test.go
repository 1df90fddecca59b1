package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
)

func searchServer(t *testing.T) (http.Handler, *fakeSearches) {
	t.Helper()
	f := newFakeSearches()
	return New(Config{}, Deps{Log: kgtest.Logger(t), Searches: f}).Handler(), f
}

// eventType is runner.Event as its JSON has it: Step's fields inlined
// beside seq (SchemaMatches does not look into embedded structs).
func eventType() reflect.Type {
	fields := []reflect.StructField{{Name: "Seq", Type: reflect.TypeFor[int](), Tag: `json:"seq"`}}
	for f := range reflect.TypeFor[rollout.Step]().Fields() {
		fields = append(fields, f)
	}
	for i := range fields {
		fields[i].Index, fields[i].Offset = nil, 0
	}
	return reflect.StructOf(fields)
}

func TestSearchSchemasMatchGoTypes(t *testing.T) {
	doc := loadSpec(t)
	kgtest.SchemaMatches(t, doc, "SearchRequest", reflect.TypeFor[runner.Request]())
	kgtest.SchemaMatches(t, doc, "SearchLLM", reflect.TypeFor[runner.LLMSettings]())
	kgtest.SchemaMatches(t, doc, "SearchRef", reflect.TypeFor[searchRef]())
	kgtest.SchemaMatches(t, doc, "SearchStatus", reflect.TypeFor[runner.Status]())
	kgtest.SchemaMatches(t, doc, "SearchBest", reflect.TypeFor[runner.Best]())
	kgtest.SchemaMatches(t, doc, "SearchNode", reflect.TypeFor[runner.NodeSummary]())
	kgtest.SchemaMatches(t, doc, "SearchMessage", reflect.TypeFor[rollout.Message]())
	kgtest.SchemaMatches(t, doc, "SearchEvent", eventType())
}

// goodStep is a step that made node n with a correct verdict.
func goodStep(n int) rollout.Step {
	v := dispatch.Verdict(eval.TimingCPUInterpreter, dispatch.Job{Job: eval.Job{Code: "GOOD"}}, eval.StatusCorrect, "", "")
	v.Compiled, v.Correct = true, true
	return rollout.Step{Node: n, Action: rollout.ActionLarge, Policy: "adaexplore", Code: "GOOD",
		Prompt: []rollout.Message{{Role: "user", Content: "write\na kernel"}}, Completion: "```python\nGOOD\n```",
		Verdict: &v, Reward: 0.4, BestNode: n, SkillIDs: []string{"sk-1"}}
}

// failedStep is a step that made no node.
func failedStep() rollout.Step {
	return rollout.Step{Action: rollout.ActionSmall, Policy: "adaexplore", Completion: "prose", Error: "no code in the answer"}
}

func TestSearchLifecycle(t *testing.T) {
	h, f := searchServer(t)
	body := map[string]any{"task_id": "ci/1_add_relu", "steps": 8, "options": map[string]any{"seeds": 2},
		"llm": map[string]any{"base_url": "http://llm/v1", "api_key": "sk-secret-123", "model": "m"}}
	var ref searchRef
	rec := call(t, h, http.MethodPost, "/v1/searches", "/v1/searches", body, &ref)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ref.SearchID != "s_1" || ref.State != runner.StateRunning || ref.Location != "/v1/searches/s_1" || rec.Header().Get("Location") != ref.Location {
		t.Errorf("ref %+v, Location %q", ref, rec.Header().Get("Location"))
	}
	if strings.Contains(rec.Body.String(), "sk-secret-123") {
		t.Errorf("the key is echoed: %s", rec.Body)
	}
	req := f.started[0]
	// Omitted options take the harness defaults; given ones are kept.
	def := eval.DefaultOptions()
	if req.TaskID != "ci/1_add_relu" || req.Steps != 8 || req.LLM.APIKey != "sk-secret-123" || req.LLM.Model != "m" ||
		req.Options == nil || req.Options.Seeds != 2 || req.Options.Timing != def.Timing || req.Options.MaxIters != def.MaxIters {
		t.Errorf("runner got %+v (options %+v)", req, req.Options)
	}

	f.step("s_1", goodStep(1))
	f.step("s_1", failedStep())
	var st runner.Status
	call(t, h, http.MethodGet, "/v1/searches/s_1", "/v1/searches/{id}", nil, &st)
	if st.State != runner.StateRunning || st.Steps != 2 || len(st.Nodes) != 1 || st.Actions["small"] != 1 {
		t.Errorf("status %+v", st)
	}
	call(t, h, http.MethodDelete, "/v1/searches/s_1", "/v1/searches/{id}", nil, &st)
	if st.State != runner.StateCancelled || st.Steps != 2 {
		t.Errorf("after cancel: %+v", st)
	}
	// Cancelling an ended search answers its status unchanged.
	f.end("s_1", runner.StateCancelled)
	rec = call(t, h, http.MethodDelete, "/v1/searches/s_1", "/v1/searches/{id}", nil, &st)
	if rec.Code != http.StatusOK || st.State != runner.StateCancelled {
		t.Errorf("second cancel: %d %+v", rec.Code, st)
	}
	// Options omitted altogether: the runner gets this server's defaults (its
	// own, eval.DefaultOptions, know nothing of the caps: caps_test.go).
	call(t, h, http.MethodPost, "/v1/searches", "/v1/searches", map[string]any{"reference": "class Model: pass", "steps": 1}, &ref)
	if o := f.started[1].Options; o == nil || !reflect.DeepEqual(*o, def) || f.started[1].Reference != "class Model: pass" {
		t.Errorf("second request %+v (options %+v)", f.started[1], o)
	}
}

func TestSearchErrors(t *testing.T) {
	h, _ := searchServer(t)
	key := map[string]any{"api_key": "sk-secret-456", "base_url": "http://down/v1"}
	for _, c := range []struct {
		name   string
		method string
		path   string
		spec   string
		body   any
		status int
		code   Code
		field  string
		want   string
	}{
		{"runner refuses", "POST", "/v1/searches", "/v1/searches", map[string]any{"reference": "BAD", "steps": 1, "llm": key}, 400, CodeInvalidRequest, "", "cannot reach http://down/v1"},
		{"unknown task", "POST", "/v1/searches", "/v1/searches", map[string]any{"task_id": "ci/nope", "steps": 1}, 404, CodeTaskNotFound, "task_id", "ci/nope"},
		{"runner fails", "POST", "/v1/searches", "/v1/searches", map[string]any{"reference": "FAIL", "steps": 1, "llm": key}, 500, CodeInternal, "", "see the server's log"},
		{"malformed", "POST", "/v1/searches", "/v1/searches", []byte(`{"steps":`), 400, CodeBadJSON, "", "malformed"},
		{"unknown field", "POST", "/v1/searches", "/v1/searches", map[string]any{"steps": 1, "budget": 3}, 400, CodeBadJSON, "budget", "unknown field"},
		{"unknown llm field", "POST", "/v1/searches", "/v1/searches", map[string]any{"steps": 1, "llm": map[string]any{"key": "x"}}, 400, CodeBadJSON, "key", "unknown field"},
		{"wrong type", "POST", "/v1/searches", "/v1/searches", map[string]any{"steps": "many"}, 400, CodeBadJSON, "steps", "cannot unmarshal"},
		{"bad options", "POST", "/v1/searches", "/v1/searches", map[string]any{"steps": 1, "options": map[string]any{"seeds": 0}}, 400, CodeInvalidOptions, "options.seeds", "seeds"},
		{"get unknown", "GET", "/v1/searches/s_9", "/v1/searches/{id}", nil, 404, CodeSearchNotFound, "id", `no search "s_9"`},
		{"cancel unknown", "DELETE", "/v1/searches/s_9", "/v1/searches/{id}", nil, 404, CodeSearchNotFound, "id", `no search "s_9"`},
		{"events unknown", "GET", "/v1/searches/s_9/events", "/v1/searches/{id}/events", nil, 404, CodeSearchNotFound, "id", `no search "s_9"`},
		{"bad after", "GET", "/v1/searches/s_9/events?after=x", "/v1/searches/{id}/events", nil, 400, CodeInvalidRequest, "after", "integer"},
		{"negative after", "GET", "/v1/searches/s_9/events?after=-1", "/v1/searches/{id}/events", nil, 400, CodeInvalidRequest, "after", "integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := call(t, h, c.method, c.path, c.spec, c.body, nil)
			wantError(t, rec, c.status, c.code, c.field, c.want)
			if strings.Contains(rec.Body.String(), "sk-secret-456") {
				t.Errorf("the key is echoed: %s", rec.Body)
			}
		})
	}
	t.Run("bad Last-Event-ID", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/v1/searches/s_9/events", nil)
		req.Host = "localhost" // a loopback gateway answers only to loopback names (doors.go)
		req.Header.Set("Last-Event-ID", "seven")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkSpec(t, "GET", "/v1/searches/{id}/events", rec)
		wantError(t, rec, 400, CodeInvalidRequest, "Last-Event-ID", `"seven"`)
	})
}

// Without a runner (no --llm-url) every search endpoint answers 503.
func TestSearchesNotConfigured(t *testing.T) {
	h := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	for _, c := range []struct{ method, path, spec string }{
		{"POST", "/v1/searches", "/v1/searches"},
		{"GET", "/v1/searches/s_1", "/v1/searches/{id}"},
		{"DELETE", "/v1/searches/s_1", "/v1/searches/{id}"},
		{"GET", "/v1/searches/s_1/events", "/v1/searches/{id}/events"},
	} {
		rec := call(t, h, c.method, c.path, c.spec, map[string]any{"steps": 1}, nil)
		wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "searches are not configured")
	}
}

// The LLM key is never logged, even when the runner's errors quote it.
func TestSearchKeyNotLogged(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := New(Config{}, Deps{Log: log, Searches: newFakeSearches()}).Handler()
	llm := map[string]any{"api_key": "sk-secret-789"}
	for _, ref := range []string{"BAD", "FAIL", "class Model: pass"} {
		rec := call(t, h, http.MethodPost, "/v1/searches", "/v1/searches", map[string]any{"reference": ref, "steps": 1, "llm": llm}, nil)
		if strings.Contains(rec.Body.String(), "sk-secret-789") {
			t.Errorf("%s: the key is echoed: %s", ref, rec.Body)
		}
	}
	if !strings.Contains(logs.String(), "starting a search failed") || !strings.Contains(logs.String(), "search started") {
		t.Fatalf("the log lacks the failure or the start:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "sk-secret-789") {
		t.Errorf("the key is logged:\n%s", logs.String())
	}
}
