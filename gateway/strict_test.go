package gateway

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func TestCheckDuplicateKeys(t *testing.T) {
	tests := []struct {
		in, dup string
	}{
		{`{"a": 1, "b": 2}`, ""},
		{`{"a": 1, "a": 2}`, "a"},
		{`{"a": {"x": 1, "y": {"x": 2}}}`, ""},
		{`{"options": {"timeout_s": 1, "timeout_s": 2}}`, "options.timeout_s"},
		{`{"prompts": [{"role": "user"}, {"role": "user", "role": "system"}]}`, "prompts[1].role"},
		{`[{"a": 1}, {"a": 1}]`, ""},
		{`{"a\u0062": 1, "ab": 2}`, "ab"}, // the same key, escaped once
		{`"text"`, ""},
		// A null item: encoding/json would read it as the zero value (a null code as "").
		{`{"codes": ["x", null]}`, "codes[1]"},
		{`{"prompts": [null]}`, "prompts[0]"},
		{`{"prompts": [[{"role": "user", "content": "x"}, null]]}`, "prompts[0][1]"},
		{`{"finish_reasons": ["length", null]}`, ""}, // nullable items (openapi.yaml)
	}
	for _, tt := range tests {
		err := checkDuplicateKeys([]byte(tt.in))
		de, ok := errors.AsType[*duplicateKeyError](err)
		switch {
		case tt.dup == "" && err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.dup != "" && (!ok || de.path != tt.dup):
			t.Errorf("%s: %v, want the duplicate %s", tt.in, err, tt.dup)
		}
	}
}

// A body with a key twice is 400 bad_json naming the key, on every
// endpoint that decodes one (they share decodeStrict).
func TestDuplicateKeysAre400(t *testing.T) {
	h := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	tests := []struct {
		path, body, field string
	}{
		{"/v1/rewards", `{"reference": "a\nb", "reference": "c\nd", "codes": ["x"]}`, "reference"},
		{"/v1/rewards", `{"task_id": "ci/1_add_relu", "codes": ["x"], "options": {"timeout_s": 5, "timeout_s": 6}}`, "options.timeout_s"},
		{"/v1/evaluations", `{"task_id": "a", "task_id": "b", "code": "x"}`, "task_id"},
		{"/v1/tasks", `{"source": "a", "source": "b"}`, "source"},
	}
	for _, tt := range tests {
		rec := do(t, h, "POST", tt.path, []byte(tt.body))
		e := decodeError(t, rec)
		if rec.Code != 400 || e.Code != CodeBadJSON || e.Field != tt.field || !strings.Contains(e.Message, "duplicate key") {
			t.Errorf("%s %s: %d %+v", tt.path, tt.body, rec.Code, e)
		}
		checkSpec(t, "POST", tt.path, rec)
	}
}

// A query parameter given twice is 400, never the first or the last.
func TestRepeatedQueryIs400(t *testing.T) {
	h := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	rec := do(t, h, "GET", "/v1/tasks?limit=1&limit=2", nil)
	if e := decodeError(t, rec); rec.Code != 400 || e.Code != CodeInvalidRequest || e.Field != "limit" {
		t.Fatalf("%d %+v", rec.Code, e)
	}
	checkSpec(t, "GET", "/v1/tasks", rec)
	if rec := do(t, h, "GET", "/v1/tasks?limit=1&origin=suite", nil); rec.Code != 200 {
		t.Fatalf("distinct parameters: %d %s", rec.Code, rec.Body)
	}
}

// Exports are counted per key per hour; a refused request costs nothing.
func TestExportQuota(t *testing.T) {
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := New(Config{ExportsPerHour: 1}, Deps{Log: kgtest.Logger(t), Exports: Exports{DataDir: data}}).Handler()
	if rec := do(t, h, "POST", "/v1/exports", []byte(`{"format": "nope"}`)); rec.Code != 400 {
		t.Fatalf("bad format: %d %s", rec.Code, rec.Body)
	}
	first := do(t, h, "POST", "/v1/exports", []byte(`{"format": "sft"}`))
	if first.Code == 429 || first.Code >= 500 {
		t.Fatalf("first export: %d %s", first.Code, first.Body)
	}
	rec := do(t, h, "POST", "/v1/exports", []byte(`{"format": "sft"}`))
	if e := decodeError(t, rec); rec.Code != 429 || e.Code != CodeQuotaExceeded || !strings.Contains(e.Message, "--exports-per-hour") || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("second export: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	checkSpec(t, "POST", "/v1/exports", rec)

	// A quota is per key: one key's spent quota leaves another's whole.
	f, keys := keyFile(t, map[string]string{"a": "export", "b": "export"})
	keyed := New(Config{ExportsPerHour: 1}, Deps{Log: kgtest.Logger(t), Keys: apikey.NewKeyring(f), Exports: Exports{DataDir: data}}).Handler()
	for i, tt := range []struct {
		key  string
		want bool // within its quota
	}{{"a", true}, {"a", false}, {"b", true}, {"b", false}} {
		rec := request(t, keyed, "POST", "/v1/exports", "Bearer "+keys[tt.key], []byte(`{"format": "sft"}`))
		if got := rec.Code != 429; got != tt.want || rec.Code >= 500 {
			t.Fatalf("export %d by key %s: %d %s, want within quota %v", i, tt.key, rec.Code, rec.Body, tt.want)
		}
	}
	unlimited := New(Config{ExportsPerHour: -1}, Deps{Log: kgtest.Logger(t), Exports: Exports{DataDir: data}}).Handler()
	for range 3 {
		if rec := do(t, unlimited, "POST", "/v1/exports", []byte(`{"format": "sft"}`)); rec.Code == 429 {
			t.Fatalf("no quota: %d %s", rec.Code, rec.Body)
		}
	}
}

// null is a value only where openapi.yaml says nullable; elsewhere it is
// refused, never read as "absent".
func TestNullMembersAreRefused(t *testing.T) {
	tests := []struct {
		in, path string
	}{
		{`{"reference": "a\nb", "task_id": null}`, "task_id"},
		{`{"options": {"seeds": null}}`, "options.seeds"},
		{`{"options": {"atol": null, "rtol": null}}`, ""},
		{`{"llm": {"temperature": null}}`, ""},
		// An array item too: encoding/json reads a null string item as "".
		{`{"labels": [null]}`, "labels[0]"},
		{`{"finish_reasons": [null, "stop"]}`, ""}, // nullable items
	}
	for _, tt := range tests {
		err := checkDuplicateKeys([]byte(tt.in))
		de, ok := errors.AsType[*duplicateKeyError](err)
		switch {
		case tt.path == "" && err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.path != "" && (!ok || !de.null || de.path != tt.path || !strings.Contains(de.Error(), tt.path+" is null")):
			t.Errorf("%s: %v, want null %s refused", tt.in, err, tt.path)
		}
	}
}

// What openapi.yaml refuses, the server refuses, and the reverse: cases
// schemathesis found where the two read a request differently.
func TestContractEdges(t *testing.T) {
	st := startFakeStack(t)
	for _, path := range []string{"/v1/tasks?origin=", "/v1/tasks?limit="} {
		rec := call(t, st.h, http.MethodGet, path, "/v1/tasks", nil, nil)
		if rec.Code != 400 {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	rec := call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards",
		map[string]any{"task_id": "ci/1_add_relu", "codes": []string{"GOOD"}, "prompts": []any{[]any{map[string]any{"role": "user"}}}}, nil)
	wantError(t, rec, 400, CodeInvalidRequest, "prompts[0]", "no content")
	// A reference of two lines that Go's unicode.IsSpace would call one (U+00A0
	// is no space to the schema's pattern) is a reference, as the schema says.
	rec = call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards",
		map[string]any{"reference": "\u00a0\n\u00a0", "codes": []string{"x"}, "wait_s": 0}, nil)
	if rec.Code != 202 && rec.Code != 200 {
		t.Errorf("a two-line reference: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/rewards", strings.NewReader(`{"task_id": "ci/1_add_relu", "codes": ["GOOD"], "wait_s": 0}`))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header["Idempotency-Key"] = []string{""}
	rr := httptest.NewRecorder()
	st.h.ServeHTTP(rr, req)
	wantError(t, rr, 400, CodeInvalidRequest, "Idempotency-Key", "1 to 255 printable ASCII")
}
