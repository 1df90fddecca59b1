package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTasksSynthFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "suite")
	tests := []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{"n zero", []string{"--n", "0", "--out", out}, "--n must be in 1..10000"},
		{"n too big", []string{"--n", "10001", "--out", out}, "--n must be in 1..10000"},
		{"n not a number", []string{"--n", "x", "--out", out}, "invalid argument"},
		{"bad size", []string{"--n", "2", "--out", out, "--size", "huge"}, `--size: size "huge": want small or gpu`},
		{"no out", []string{"--n", "2"}, "required flag"},
		{"bad seed", []string{"--n", "2", "--out", out, "--seed", "1.5"}, "invalid argument"},
		{"extra argument", []string{"--n", "2", "--out", out, "more"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCmd(t, append([]string{"tasks", "synth"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(errs, tt.stderrHas) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, exitUsage, tt.stderrHas)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s", out)
	}
}

func TestTasksSynthWrites(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new", "suite")
	code, stdout, errs := runCmd(t, "tasks", "synth", "--n", "12", "--seed", "5", "--size", "small", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	py, _ := filepath.Glob(filepath.Join(out, "*.py"))
	if len(py) != 12 || strings.Count(stdout, "\n") != 12 || !strings.Contains(stdout, py[0]) {
		t.Fatalf("%d files, stdout:\n%s", len(py), stdout)
	}
	var m struct {
		Generator int    `json:"generator"`
		N         int    `json:"n"`
		Seed      int64  `json:"seed"`
		Size      string `json:"size"`
		Files     []struct {
			File  string   `json:"file"`
			Ops   []string `json:"ops"`
			DType string   `json:"dtype"`
		} `json:"files"`
	}
	raw, err := os.ReadFile(filepath.Join(out, "synth.json"))
	if err != nil || json.Unmarshal(raw, &m) != nil {
		t.Fatalf("synth.json: %v\n%s", err, raw)
	}
	if m.Generator < 1 || m.N != 12 || m.Seed != 5 || m.Size != "small" || len(m.Files) != 12 ||
		filepath.Join(out, m.Files[0].File) != py[0] || len(m.Files[0].Ops) < 2 || m.Files[0].DType == "" {
		t.Errorf("synth.json: %+v", m)
	}

	first, err := os.ReadFile(py[3])
	if err != nil {
		t.Fatal(err)
	}
	// A second run must not mix into the first, unless forced.
	code, _, errs = runCmd(t, "tasks", "synth", "--n", "3", "--out", out)
	if code != exitFailed || !strings.Contains(errs, "already holds .py files") || !strings.Contains(errs, "--force") {
		t.Errorf("rerun: exit %d, stderr %q", code, errs)
	}
	code, stdout, errs = runCmd(t, "tasks", "synth", "--n", "12", "--seed", "5", "--size", "small", "--out", out, "--force", "--quiet")
	if code != exitOK || stdout != "" {
		t.Errorf("--force --quiet: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	again, err := os.ReadFile(py[3])
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) {
		t.Error("same flags, different bytes")
	}
}
