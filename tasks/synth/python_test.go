package synth

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// python finds the interpreter: $KERNELGATE_PYTHON (the Makefile sets it
// to the venv), else .venv/bin/python at the repo root. Without one the
// test skips, unless KERNELGATE_REQUIRE_PYTHON=1 (CI), where it fails.
func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("KERNELGATE_PYTHON")
	if py == "" {
		py = filepath.Join("..", "..", ".venv", "bin", "python")
	}
	if _, err := exec.LookPath(py); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch (%v); set KERNELGATE_PYTHON or run make setup", err)
	}
	return py
}

// runTasks writes n tasks of the preset to a temp dir and runs
// testdata/run_tasks.py on them; it checks what the Go tracker cannot:
// that the emitted code runs, with the shapes and dtypes it predicted,
// and that the outputs are not degenerate.
func runTasks(t *testing.T, py, preset string, seed int64, n int, args ...string) {
	dir := t.TempDir()
	p := Presets[preset]
	tasks := GenerateAll(p, seed, n)
	if err := Write(dir, tasks, NewManifest(p, seed, tasks), false, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append(append([]string{filepath.Join("testdata", "run_tasks.py")}, args...), dir)...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run_tasks.py %v on %d %s tasks: %v\n%s", args, n, preset, err, out)
	}
	t.Logf("%s", out)
}

func TestSmallTasksRunInPython(t *testing.T) {
	runTasks(t, python(t), "small", 11, 30)
}

// The gpu sizes are too big for CPU; the meta device checks their shapes.
func TestGPUTasksRunOnMeta(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: another torch import")
	}
	runTasks(t, python(t), "gpu", 11, 10, "--meta")
}
