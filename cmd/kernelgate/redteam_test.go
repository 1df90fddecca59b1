package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/redteam"
)

// An --out that cannot be made is refused before anything runs, not after
// a run of minutes whose misses it could then not keep.
func TestRedteamRefusesAnUnusableOutAtOnce(t *testing.T) {
	var stdout, stderr bytes.Buffer
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code := run(context.Background(), []string{"redteam", "--tasks", "../../datasets/ci", "--solutions",
		"../../datasets/solutions/ci", "--out", filepath.Join(file, "misses")}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--out") || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused after %s: something ran first", d)
	}
}

// needHarness skips (fails in CI) without a Python with torch; unlike
// needPython it keeps every zygote slot, as a run would.
func needHarness(t *testing.T) {
	t.Helper()
	if _, err := harness.ResolvePython(os.Getenv(harness.EnvPython)); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
}

// TestRedteamCatchesEveryClassOnCI runs `kernelgate redteam` over
// datasets/ci with its solutions through the real harness (CPU in CI): every
// class meaningful on the CPU is generated against every ci task and caught
// every time, at least 20 of them, and every honest control stays correct.
func TestRedteamCatchesEveryClassOnCI(t *testing.T) {
	needHarness(t)
	tasks, err := datasets.Load("../../datasets/ci")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"redteam", "--tasks", "../../datasets/ci", "--solutions",
		"../../datasets/solutions/ci", "--json", "--out", out, "--seeds", "3"}, &stdout, &stderr)
	wall := time.Since(start)
	var r redteam.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("exit %d, stderr %s\nstdout %s", code, stderr.String(), stdout.String())
	}
	t.Logf("redteam over datasets/ci: %d variants generated, %d evaluated, %d caught, %d missed, %d by known gaps, %d skipped; controls %d, failed %d; %.1f s (report %.1f s)",
		r.Generated, r.Evaluated, r.Caught, r.Missed, r.KnownGap, r.Skipped, len(r.Controls), r.ControlsFailed, wall.Seconds(), r.WallS)
	if code != exitOK || !r.OK {
		t.Errorf("exit %d, ok %v: %s", code, r.OK, stderr.String())
	}
	if len(r.Controls) != len(tasks) {
		t.Errorf("%d controls for %d tasks", len(r.Controls), len(tasks))
	}
	for _, c := range r.Controls {
		if c.Status != eval.StatusCorrect {
			t.Errorf("control %s is %s: %s", c.Task, c.Status, c.Miss)
		}
	}
	full := 0
	for _, c := range r.Classes {
		if c.Generated != len(tasks) {
			t.Errorf("%s: %d variants generated for %d tasks", c.Name, c.Generated, len(tasks))
		}
		if c.Missed > 0 || c.Errors > 0 {
			t.Errorf("%s: %d missed, %d errors: %+v", c.Name, c.Missed, c.Errors, c.Tasks)
		}
		if !c.GPUOnly && c.Gap == "" {
			if c.Caught != len(tasks) {
				t.Errorf("%s: caught %d of %d", c.Name, c.Caught, len(tasks))
			} else {
				full++
			}
		}
	}
	if full < 20 {
		t.Errorf("%d classes caught on every ci task; want at least 20", full)
	}
	// Only known gaps leave sources behind, one per task.
	saved, _ := filepath.Glob(filepath.Join(out, "*", "*.py"))
	if len(saved) != r.KnownGap {
		t.Errorf("%d sources saved under --out for %d known-gap misses", len(saved), r.KnownGap)
	}
}
