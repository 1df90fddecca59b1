package gateway

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	unlimited := New(Config{ExportsPerHour: -1}, Deps{Log: kgtest.Logger(t), Exports: Exports{DataDir: data}}).Handler()
	for range 3 {
		if rec := do(t, unlimited, "POST", "/v1/exports", []byte(`{"format": "sft"}`)); rec.Code == 429 {
			t.Fatalf("no quota: %d %s", rec.Code, rec.Body)
		}
	}
}
