package gateway

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// exportServer is a gateway over the ci suite whose data directory holds a
// log of one correct evaluation of ci/1_add_relu (when logged).
func exportServer(t *testing.T, logged bool) (http.Handler, string) {
	t.Helper()
	reg := ciRegistry(t, nil)
	data := t.TempDir()
	if logged {
		task, _ := reg.Get(t.Context(), "ci/1_add_relu")
		sp := 1.4
		ev := event.Evaluation{EventID: "e1", Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), EvalID: "e1",
			TaskID: task.ID, TaskSource: task.Source, Code: "class ModelNew: pass",
			Verdict: eval.Verdict{Status: eval.StatusCorrect, Correct: true, Speedup: &sp, TaskHash: task.TaskHash, CodeHash: "sha256:c"}}
		raw, _ := json.Marshal(ev)
		sink, err := export.NewSink(filepath.Join(data, dataset.LogDir), "w1", kgtest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Handle(t.Context(), []bus.Event{{ID: "e1", Subject: event.SubjectEvaluation, Data: raw, NumDelivered: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	srv := New(Config{}, Deps{Log: kgtest.Logger(t), Tasks: reg, Exports: Exports{DataDir: data, Version: "v-test"}})
	return srv.Handler(), data
}

func TestExportSchemasMatchGoTypes(t *testing.T) {
	doc := loadSpec(t)
	kgtest.SchemaMatches(t, doc, "ExportRequest", reflect.TypeFor[exportRequest]())
	kgtest.SchemaMatches(t, doc, "ExportManifest", reflect.TypeFor[exportManifest]())
}

func TestCreateExport(t *testing.T) {
	h, data := exportServer(t, true)
	var m dataset.Manifest
	rec := call(t, h, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "sft", "task": []string{"ci/*"}}, &m)
	if rec.Code != http.StatusCreated {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if m.ExportID == "" || m.Format != dataset.FormatSFT || m.Files["sft.parquet"] != 1 || m.KernelgateVersion != "v-test" {
		t.Fatalf("manifest %+v", m)
	}
	dir := filepath.Join(data, ExportsDir, m.ExportID)
	for _, f := range []string{"sft.parquet", dataset.ManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var disk dataset.Manifest
	raw, _ := os.ReadFile(filepath.Join(dir, dataset.ManifestFile))
	if err := json.Unmarshal(raw, &disk); err != nil || disk.ExportID != m.ExportID {
		t.Errorf("manifest.json %s: %v", raw, err)
	}

	// verl reads the registered tasks, not the log.
	rec = call(t, h, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "verl"}, &m)
	if rec.Code != http.StatusCreated || m.Files["train.parquet"]+m.Files["test.parquet"] != 8 {
		t.Fatalf("verl: %d %+v", rec.Code, m)
	}
	// Nothing matched: an empty dataset, still 201.
	rec = call(t, h, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "dpo", "since": "2030-01-01"}, &m)
	if rec.Code != http.StatusCreated || m.Rows != 0 || m.Filters.Since == nil {
		t.Fatalf("empty: %d %+v", rec.Code, m)
	}
}

func TestCreateExportErrors(t *testing.T) {
	h, _ := exportServer(t, true)
	for _, c := range []struct {
		body   any
		status int
		code   Code
		field  string
		want   string
	}{
		{map[string]any{"format": "csv"}, 400, CodeInvalidRequest, "format", `unknown format "csv"`},
		{map[string]any{"format": "sft", "since": "soon"}, 400, CodeInvalidRequest, "since", "want RFC3339"},
		{map[string]any{"format": "dpo", "max_pairs_per_task": 0}, 400, CodeInvalidRequest, "max_pairs_per_task", "1 or more"},
		{map[string]any{"format": "sft", "out": "/etc"}, 400, CodeBadJSON, "out", "unknown field"},
		{[]byte(`{"format":`), 400, CodeBadJSON, "", "malformed"},
	} {
		rec := call(t, h, http.MethodPost, "/v1/exports", "/v1/exports", c.body, nil)
		wantError(t, rec, c.status, c.code, c.field, c.want)
	}
	// The same message as the CLI's.
	_, err := dataset.Request{Format: "csv"}.Parse()
	rec := call(t, h, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "csv"}, nil)
	wantError(t, rec, 400, CodeInvalidRequest, "format", err.Error())

	empty, _ := exportServer(t, false)
	rec = call(t, empty, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "sft"}, nil)
	wantError(t, rec, http.StatusNotFound, CodeNotFound, "", "nothing has been logged")

	off := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	rec = call(t, off, http.MethodPost, "/v1/exports", "/v1/exports", map[string]any{"format": "sft"}, nil)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "not configured")
}
