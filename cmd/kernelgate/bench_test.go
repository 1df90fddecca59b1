package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `bench --fidelity` on the real harness in CPU mode: both passes run, and
// since the interpreter times nothing, every kernel is listed as excluded
// with the reason and the report says nothing is comparable (exit 0).
func TestBenchFidelityCPU(t *testing.T) {
	needPython(t)
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"bench", "--fidelity", "--tasks", "../../datasets/ci", "--kernels", "../../datasets/solutions/ci",
		"--repeat", "1", "--seeds", "1", "--concurrency", "2", "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	out := stdout.String()
	for _, s := range []string{"2 in flight (full)", "excluded from the statistics (8)", "timing not comparable on CPU",
		"no kernel is comparable: all 8 excluded", "full pass (2 in flight): 8 evaluations", "statuses: correct=8", "c1 pass (1 in flight): 8 evaluations"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	kernels, _ := filepath.Glob("../../datasets/solutions/ci/*.py")
	if len(kernels) != 8 {
		t.Fatalf("%d ci solutions, want 8", len(kernels))
	}
	for _, k := range kernels {
		name := filepath.Base(k)
		if !strings.Contains(out, strings.TrimSuffix(name, ".py")+" / "+name+": timing not comparable on CPU") {
			t.Errorf("kernel %s not listed with its reason:\n%s", name, out)
		}
	}
	if strings.Contains(out, "PARTIAL") || strings.Contains(out, "|RATIO-1|") {
		t.Errorf("unexpected partial mark or empty table:\n%s", out)
	}
}

// `bench --fidelity --json`: one object with the documented fields, both
// passes' plain bench reports inside (one task, to keep it short).
func TestBenchFidelityJSON(t *testing.T) {
	needPython(t)
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"bench", "--fidelity", "--json", "--tasks", "../../datasets/ci/1_add_relu.py",
		"--kernels", "../../datasets/solutions/ci", "--seeds", "1", "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	var obj struct {
		Partial    *bool  `json:"partial"`
		Repeat     int    `json:"repeat"`
		Percentile string `json:"percentile"`
		Passes     []struct {
			Name        string `json:"name"`
			Concurrency int    `json:"concurrency"`
			Report      *struct {
				Evals       int            `json:"evals"`
				EvalsPerSec float64        `json:"evals_per_s"`
				Statuses    map[string]int `json:"statuses"`
				Rows        []struct {
					TimingMode string   `json:"timing_mode"`
					Speedup    *float64 `json:"speedup"`
				} `json:"rows"`
			} `json:"report"`
		} `json:"passes"`
		Kernels  []json.RawMessage `json:"kernels"`
		Excluded []struct {
			Task, Kernel, Reason string
		} `json:"excluded"`
		Summary map[string]any `json:"summary"`
		Notes   []string       `json:"notes"`
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	if dec.More() {
		t.Fatal("stdout holds more than one object")
	}
	if obj.Partial == nil || *obj.Partial || obj.Repeat != 1 || obj.Percentile != "nearest-rank" || len(obj.Passes) != 2 {
		t.Fatalf("object: %+v", obj)
	}
	for i, name := range []string{"full", "c1"} {
		p := obj.Passes[i]
		if p.Name != name || p.Report == nil || p.Report.Evals != 1 || p.Report.Statuses["correct"] != 1 ||
			len(p.Report.Rows) != 1 || p.Report.Rows[0].TimingMode != "cpu_interpreter" || p.Report.Rows[0].Speedup != nil {
			t.Errorf("pass %d: %+v", i, p)
		}
	}
	if obj.Passes[1].Concurrency != 1 {
		t.Errorf("c1 pass at concurrency %d", obj.Passes[1].Concurrency)
	}
	if len(obj.Kernels) != 0 || len(obj.Excluded) != 1 || obj.Excluded[0].Task != "1_add_relu" ||
		!strings.Contains(obj.Excluded[0].Reason, "timing not comparable on CPU") {
		t.Errorf("kernels %s excluded %+v", obj.Kernels, obj.Excluded)
	}
	for _, k := range []string{"compared", "excluded", "deviation_p50", "deviation_p90", "deviation_max", "within_3pct", "within_10pct"} {
		if _, ok := obj.Summary[k]; !ok {
			t.Errorf("summary lacks %q: %v", k, obj.Summary)
		}
	}
	if obj.Summary["compared"] != 0.0 || obj.Summary["deviation_p50"] != nil || len(obj.Notes) == 0 {
		t.Errorf("summary %v notes %v", obj.Summary, obj.Notes)
	}
}

// No pair at all is an error before any supervisor starts (no Python needed).
func TestBenchFidelityNeedsPairs(t *testing.T) {
	code, _, stderr := runCmd(t, "bench", "--fidelity", "--tasks", "../../datasets/ci", "--kernels", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "no kernel in") {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
}
