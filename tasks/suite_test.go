package tasks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

func TestLoadSuites(t *testing.T) {
	ts, err := LoadSuites([]string{"../datasets/ci", "../datasets/level2"})
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := filepath.Glob("../datasets/ci/*.py")
	l2, _ := filepath.Glob("../datasets/level2/*.py")
	if len(ts) != len(ci)+len(l2) || len(ci) < 8 || len(l2) < 40 {
		t.Fatalf("%d tasks, want %d + %d", len(ts), len(ci), len(l2))
	}
	byID := map[string]Task{}
	for _, tk := range ts {
		byID[tk.ID] = tk
	}
	add, ok := byID["ci/1_add_relu"]
	if !ok {
		t.Fatalf("no ci/1_add_relu in %v", ts)
	}
	src, _ := os.ReadFile("../datasets/ci/1_add_relu.py")
	if add.Name != "1_add_relu" || add.Source != string(src) || add.TaskHash != eval.HashSource(string(src)) ||
		add.Origin != OriginSuite || add.CreatedAt.IsZero() {
		t.Errorf("ci/1_add_relu = %+v", add)
	}
	if _, ok := byID["level2/1_gemm_bias_relu"]; !ok {
		t.Error("no level2/1_gemm_bias_relu")
	}
}

func TestLoadSuitesErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a", "ci", "1.py"), "x")
	write(filepath.Join(dir, "b", "ci", "2.py"), "y")
	write(filepath.Join(dir, "dots", "1.2.py"), "z")
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	tests := []struct {
		name string
		dirs []string
		want string
	}{
		{"same suite name twice", []string{filepath.Join(dir, "a", "ci"), filepath.Join(dir, "b", "ci")}, `both suite "ci"`},
		{"invalid file stem", []string{filepath.Join(dir, "dots")}, "1.2.py"},
		{"no tasks", []string{filepath.Join(dir, "empty")}, "no task files"},
		{"missing", []string{filepath.Join(dir, "missing")}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSuites(tt.dirs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestDefaultDirs(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var want []string // every suite; solutions/ is not one
	for _, s := range []string{"ci", "heavy", "level1", "level2", "level3"} {
		want = append(want, filepath.Join(repo, "datasets", s))
	}
	if got := DefaultDirs(repo, ""); !slices.Equal(got, want) {
		t.Errorf("from the working dir: %v, want %v", got, want)
	}
	// bin/kernelgate run from elsewhere finds the repo's datasets.
	if got := DefaultDirs(t.TempDir(), filepath.Join(repo, "bin", "kernelgate")); !slices.Equal(got, want) {
		t.Errorf("from the binary: %v, want %v", got, want)
	}
	if got := DefaultDirs(t.TempDir(), "/nonexistent/bin/kernelgate"); got != nil {
		t.Errorf("nothing to find: %v", got)
	}
}
