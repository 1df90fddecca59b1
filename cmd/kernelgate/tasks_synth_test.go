package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
		{"bad size", []string{"--n", "2", "--out", out, "--size", "huge"}, `--size "huge": want auto, small or gpu`},
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
		!strings.HasPrefix(m.Files[0].File, "1_") || !slices.Contains(py, filepath.Join(out, m.Files[0].File)) ||
		len(m.Files[0].Ops) < 2 || m.Files[0].DType == "" {
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

// --size auto (the default) follows the device: gpu where a GPU is visible,
// else small; an explicit --size wins.
func TestTasksSynthDefaultSize(t *testing.T) {
	tests := []struct {
		name string
		gpu  bool
		args []string
		want string
	}{
		{"gpu visible", true, nil, "gpu"},
		{"no gpu", false, nil, "small"},
		{"auto spelled out", false, []string{"--size", "auto"}, "small"},
		{"explicit gpu without one", false, []string{"--size", "gpu"}, "gpu"},
		{"explicit small with one", true, []string{"--size", "small"}, "small"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := gpuHere
			t.Cleanup(func() { gpuHere = probe })
			gpuHere = func() bool { return tt.gpu }
			out := filepath.Join(t.TempDir(), "s")
			code, _, errs := runCmd(t, append([]string{"tasks", "synth", "--n", "1", "--out", out, "--quiet"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var m struct {
				Size string `json:"size"`
			}
			raw, err := os.ReadFile(filepath.Join(out, "synth.json"))
			if err != nil || json.Unmarshal(raw, &m) != nil || m.Size != tt.want {
				t.Errorf("size %q, want %q (%v)", m.Size, tt.want, err)
			}
		})
	}
}

// The same task is the same file whatever --n: task 1..3 of --n 3 and of
// --n 12 have one name and one content.
func TestTasksSynthNamesIndependentOfN(t *testing.T) {
	files := func(n string) map[string]string {
		out := filepath.Join(t.TempDir(), "s")
		if code, _, errs := runCmd(t, "tasks", "synth", "--n", n, "--seed", "3", "--size", "small", "--out", out, "--quiet"); code != exitOK {
			t.Fatalf("--n %s: exit %d: %s", n, code, errs)
		}
		py, _ := filepath.Glob(filepath.Join(out, "*.py"))
		got := map[string]string{}
		for _, p := range py {
			got[filepath.Base(p)] = readFileT(t, p)
		}
		return got
	}
	few, many := files("3"), files("12")
	if len(few) != 3 || len(many) != 12 {
		t.Fatalf("%d and %d files", len(few), len(many))
	}
	for name, src := range few {
		if many[name] != src {
			t.Errorf("%s: not the same file for --n 3 and --n 12", name)
		}
		if !strings.HasPrefix(name, "1_") && !strings.HasPrefix(name, "2_") && !strings.HasPrefix(name, "3_") {
			t.Errorf("file %s", name)
		}
	}
}
