package gateway

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// What a request's options become under a server's caps: the defaults fit
// the caps, a value at a cap is accepted, one above it is refused naming the
// cap and serve's flag.
func TestParseOptionsCaps(t *testing.T) {
	no := false
	// want edits eval.DefaultOptions() into the accepted options.
	fit := func(timeout, memory int) func(*eval.Options) {
		return func(o *eval.Options) { o.TimeoutS, o.MemoryLimitMB = timeout, memory }
	}
	tests := []struct {
		name    string
		cfg     Config
		raw     string
		want    func(*eval.Options) // nil: refused
		code    Code
		field   string
		message string
	}{
		{"no caps set: the harness defaults", Config{}, ``, fit(120, 32768), "", "", ""},
		{"null options", Config{MaxMemoryMB: 65536}, `null`, fit(120, 32768), "", "", ""},
		{"default memory is the cap when the cap is lower", Config{MaxMemoryMB: 12052}, `{}`, fit(120, 12052), "", "", ""},
		{"default memory is 32768 when the cap is higher", Config{MaxMemoryMB: 65536}, `{}`, fit(120, 32768), "", "", ""},
		{"default timeout is the cap when the cap is lower", Config{MaxTimeoutS: 60}, `{"seeds": 2}`,
			func(o *eval.Options) { o.TimeoutS, o.Seeds = 60, 2 }, "", "", ""},
		{"timeout at the cap", Config{MaxTimeoutS: 600}, `{"timeout_s": 600}`, fit(600, 32768), "", "", ""},
		{"timeout above the cap", Config{MaxTimeoutS: 600}, `{"timeout_s": 3600}`, nil,
			CodeOptionAboveCap, "options.timeout_s", "timeout_s 3600 is above this server's cap of 600 (--max-timeout-s)"},
		{"timeout above the default cap", Config{}, `{"timeout_s": 601}`, nil,
			CodeOptionAboveCap, "options.timeout_s", "timeout_s 601 is above this server's cap of 600 (--max-timeout-s)"},
		{"timeout beyond the harness bound: invalid, not capped", Config{MaxTimeoutS: 600}, `{"timeout_s": 3601}`, nil,
			CodeInvalidOptions, "options.timeout_s", "timeout_s must be in 1..3600"},
		{"memory at the cap", Config{MaxMemoryMB: 12052}, `{"memory_limit_mb": 12052}`, fit(120, 12052), "", "", ""},
		{"memory above the cap", Config{MaxMemoryMB: 12052}, `{"memory_limit_mb": 32768}`, nil,
			CodeOptionAboveCap, "options.memory_limit_mb", "memory_limit_mb 32768 is above this server's cap of 12052 (--max-memory-mb)"},
		{"memory above 32768 without a cap", Config{}, `{"memory_limit_mb": 1048576}`, fit(120, 1048576), "", "", ""},
		{"memory below the harness bound", Config{MaxMemoryMB: 12052}, `{"memory_limit_mb": 63}`, nil,
			CodeInvalidOptions, "options.memory_limit_mb", "memory_limit_mb must be >= 64"},
		{"require_triton false travels", Config{}, `{"require_triton": false}`,
			func(o *eval.Options) { o.RequireTriton = &no }, "", "", ""},
		{"require_triton true is the default's one spelling", Config{}, `{"require_triton": true}`, fit(120, 32768), "", "", ""},
		{"require_triton not a bool", Config{}, `{"require_triton": "no"}`, nil,
			CodeInvalidOptions, "options.require_triton", "bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, aerr := tt.cfg.withDefaults().parseOptions(json.RawMessage(tt.raw))
			if tt.want == nil {
				if aerr == nil {
					t.Fatalf("accepted %+v, want %s", got, tt.code)
				}
				if aerr.Code != tt.code || aerr.Field != tt.field || aerr.status != http.StatusBadRequest ||
					!strings.Contains(aerr.Message, tt.message) {
					t.Errorf("error %+v (status %d), want %s on %s with %q", aerr, aerr.status, tt.code, tt.field, tt.message)
				}
				return
			}
			if aerr != nil {
				t.Fatalf("refused: %v", aerr)
			}
			want := eval.DefaultOptions()
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("options %+v, want %+v", got, want)
			}
		})
	}
}

func TestConfigValidateCaps(t *testing.T) {
	for _, tt := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true}, {Config{MaxTimeoutS: 1}, true}, {Config{MaxTimeoutS: 3600}, true},
		{Config{MaxTimeoutS: 3601}, false}, {Config{MaxTimeoutS: -1}, false},
		{Config{MaxMemoryMB: 64}, true}, {Config{MaxMemoryMB: 63}, false}, {Config{MaxMemoryMB: -1}, false},
	} {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok %v", tt.cfg, err, tt.ok)
		}
	}
}

// Every endpoint that takes options holds them to the caps, and the jobs it
// queues (task checks too) carry the defaults lowered to the caps.
func TestCapsOnEveryEndpoint(t *testing.T) {
	const capTimeout, capMemory = 60, 2048
	st := startFakeStackWith(t, Config{MaxItems: 16, DefaultWait: 30 * time.Second, MaxTimeoutS: capTimeout, MaxMemoryMB: capMemory})
	searches := newFakeSearches()
	sh := New(Config{MaxTimeoutS: capTimeout, MaxMemoryMB: capMemory}, Deps{Log: kgtest.Logger(t), Searches: searches}).Handler()

	endpoints := []struct {
		name, path string
		h          http.Handler
		body       func(opts map[string]any) map[string]any
	}{
		{"rewards", "/v1/rewards", st.h, func(o map[string]any) map[string]any {
			return map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD"}, "options": o}
		}},
		{"evaluations", "/v1/evaluations", st.h, func(o map[string]any) map[string]any {
			return map[string]any{"task_id": "ci/1_add_relu", "code": "GOOD", "options": o}
		}},
		{"episodes", "/v1/episodes", st.h, func(o map[string]any) map[string]any {
			return map[string]any{"task_id": "ci/1_add_relu", "options": o}
		}},
		{"openrlhf", "/openrlhf/reward", st.h, func(o map[string]any) map[string]any {
			return map[string]any{"query": []string{"GOOD"}, "labels": []string{"ci/1_add_relu"}, "options": o}
		}},
		{"searches", "/v1/searches", sh, func(o map[string]any) map[string]any {
			return map[string]any{"task_id": "ci/1_add_relu", "steps": 2, "options": o}
		}},
	}
	for _, ep := range endpoints {
		t.Run(ep.name+"/timeout above the cap", func(t *testing.T) {
			rec := call(t, ep.h, http.MethodPost, ep.path, ep.path, ep.body(map[string]any{"timeout_s": 3600}), nil)
			wantError(t, rec, http.StatusBadRequest, CodeOptionAboveCap, "options.timeout_s",
				"timeout_s 3600 is above this server's cap of 60 (--max-timeout-s)")
		})
		t.Run(ep.name+"/memory above the cap", func(t *testing.T) {
			rec := call(t, ep.h, http.MethodPost, ep.path, ep.path, ep.body(map[string]any{"memory_limit_mb": 32768}), nil)
			wantError(t, rec, http.StatusBadRequest, CodeOptionAboveCap, "options.memory_limit_mb",
				"memory_limit_mb 32768 is above this server's cap of 2048 (--max-memory-mb)")
		})
		t.Run(ep.name+"/at the caps", func(t *testing.T) {
			rec := call(t, ep.h, http.MethodPost, ep.path, ep.path, ep.body(map[string]any{"timeout_s": capTimeout, "memory_limit_mb": capMemory}), nil)
			if rec.Code >= 300 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		})
	}

	// What the evaluations actually ran with: the defaults, fitted to the caps.
	st.ev.mu.Lock()
	st.ev.jobs = nil
	st.ev.mu.Unlock()
	if rec := call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards",
		map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD default"}}, nil); rec.Code != http.StatusOK {
		t.Fatalf("rewards without options: %d %s", rec.Code, rec.Body)
	}
	if rec := call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks",
		map[string]any{"id": "mine/capped", "source": ref}, nil); rec.Code != http.StatusCreated {
		t.Fatalf("register: %d %s", rec.Code, rec.Body)
	}
	if rec := call(t, sh, http.MethodPost, "/v1/searches", "/v1/searches",
		map[string]any{"task_id": "ci/1_add_relu", "steps": 2}, nil); rec.Code != http.StatusAccepted {
		t.Fatalf("search without options: %d %s", rec.Code, rec.Body)
	}
	st.ev.mu.Lock()
	jobs := st.ev.jobs
	st.ev.mu.Unlock()
	if len(jobs) != 2 || jobs[0].TaskCheck || !jobs[1].TaskCheck {
		t.Fatalf("jobs %+v, want an evaluation and a task check", jobs)
	}
	searches.mu.Lock()
	last := searches.started[len(searches.started)-1]
	searches.mu.Unlock()
	if last.Options == nil {
		t.Fatal("a search without options reached the runner with none (the runner's defaults ignore the caps)")
	}
	for name, o := range map[string]eval.Options{"evaluation": jobs[0].Options, "task check": jobs[1].Options, "search": *last.Options} {
		if o.TimeoutS != capTimeout || o.MemoryLimitMB != capMemory {
			t.Errorf("%s ran with timeout_s %d, memory_limit_mb %d; want the caps %d, %d", name, o.TimeoutS, o.MemoryLimitMB, capTimeout, capMemory)
		}
	}
}
