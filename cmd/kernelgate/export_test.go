package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/export/dataset"
)

func readManifest(t *testing.T, dir string) dataset.Manifest {
	t.Helper()
	var m dataset.Manifest
	data, err := os.ReadFile(filepath.Join(dir, dataset.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestExportVerlFromSuites(t *testing.T) {
	out := filepath.Join(t.TempDir(), "verl")
	code, stdout, stderr := runCmd(t, "export", "--format", "verl", "--tasks", "../../datasets/ci", "--out", out, "--test-fraction", "0.25")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := readManifest(t, out)
	if m.Files["train.parquet"]+m.Files["test.parquet"] != 8 || m.Files["test.parquet"] < 1 || m.KernelgateVersion != version ||
		*m.Options.TestFraction != 0.25 || !strings.HasSuffix(m.Sources[0], "datasets/ci/1_add_relu.py") {
		t.Errorf("manifest %+v", m)
	}
	if !strings.Contains(stdout, "verl export, 8 rows") {
		t.Errorf("stdout %q", stdout)
	}
}

func TestExportEmptyAndErrors(t *testing.T) {
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, dataset.LogDir), 0o755) // a log with nothing in it yet
	out := filepath.Join(t.TempDir(), "sft")
	code, _, stderr := runCmd(t, "export", "--format", "sft", "--data", data, "--tasks", "../../datasets/ci", "--out", out)
	if code != exitOK || !strings.Contains(stderr, "0 rows matched") {
		t.Fatalf("empty: exit %d: %s", code, stderr)
	}
	if m := readManifest(t, out); m.Rows != 0 || m.Files["sft.parquet"] != 0 {
		t.Errorf("empty manifest %+v", m)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "csv"}, exitUsage, `--format: unknown format "csv"`},
		{[]string{"--format", "sft", "--since", "last week"}, exitUsage, "--since"},
		{[]string{"--format", "sft", "--min-margin", "-1"}, exitUsage, "--min-margin"},
		{[]string{"--format", "sft", "--out", out}, exitUsage, "not empty"},
		{[]string{"--format", "sft", "--data", t.TempDir()}, exitFailed, "no log under"},
		{[]string{"--format", "verl", "--tasks", t.TempDir()}, exitUsage, "no"},
		{[]string{"--format", "verl", "--include-invalid"}, exitUsage, "--include-invalid: include_invalid does not apply to format verl"},
	} {
		args := append([]string{"export", "--tasks", "../../datasets/ci", "--data", data, "--out", filepath.Join(t.TempDir(), "x")}, c.args...)
		code, _, stderr := runCmd(t, args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d; stderr %q lacks %q", c.args, code, c.code, stderr, c.want)
		}
	}
	if code, _, stderr := runCmd(t, "export", "--format", "dpo", "--data", data, "--out", out, "--force"); code != exitOK {
		t.Errorf("--force over an export: exit %d: %s", code, stderr)
	}
}

// Without --tasks, verl reads the default suites and says which suites it
// found and left out (heavy), on stderr and in the manifest.
func TestExportVerlSaysWhatItLeftOut(t *testing.T) {
	wd := t.TempDir()
	for _, p := range []string{"ci/1_add_relu.py", "heavy/1_add_relu.py"} {
		src, err := os.ReadFile("../../datasets/ci/1_add_relu.py")
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(wd, "datasets", p)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(wd)
	out := filepath.Join(t.TempDir(), "verl")
	code, _, stderr := runCmd(t, "export", "--format", "verl", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "left out suite(s) heavy") || !strings.Contains(stderr, "--tasks") {
		t.Errorf("stderr %q does not say heavy was left out", stderr)
	}
	if m := readManifest(t, out); m.Rows != 1 || len(m.SuitesLeftOut) != 1 || m.SuitesLeftOut[0] != "heavy" {
		t.Errorf("manifest rows %d suites_left_out %v", m.Rows, m.SuitesLeftOut)
	}
	// Named with --tasks, nothing is left out by default.
	out = filepath.Join(t.TempDir(), "verl")
	code, _, stderr = runCmd(t, "export", "--format", "verl", "--out", out, "--tasks", "datasets/ci", "--tasks", "datasets/heavy")
	if m := readManifest(t, out); code != exitOK || m.Rows != 2 || m.SuitesLeftOut != nil || strings.Contains(stderr, "left out") {
		t.Errorf("--tasks: exit %d rows %d suites_left_out %v stderr %q", code, m.Rows, m.SuitesLeftOut, stderr)
	}
}
