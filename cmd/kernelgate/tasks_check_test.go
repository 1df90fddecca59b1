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
)

// TestTasksCheckRejectsWithReasons runs `tasks check` over the real zygote
// (CPU): a valid task with its solution, a task with a wrong solution, one
// that does not import, a degenerate one and one too big to run on a CPU; and
// the same big task in a suite whose suite.json allows less than it needs.
func TestTasksCheckRejectsWithReasons(t *testing.T) {
	if _, err := harness.ResolvePython(os.Getenv(harness.EnvPython)); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	good, _ := os.ReadFile("../../datasets/ci/1_add_relu.py")
	sol, _ := os.ReadFile("../../datasets/solutions/ci/1_add_relu.py")
	root := t.TempDir()
	files := map[string]string{
		"mini/1_good.py":                     string(good),
		"mini/2_wrong_solution.py":           string(good),
		"mini/3_no_import.py":                "import torch\nraise ImportError('needs a GPU library')\n",
		"mini/4_constant.py":                 strings.Replace(string(good), "return torch.relu(x + y)", "return torch.zeros_like(x)", 1),
		"mini/5_big.py":                      strings.Replace(string(good), "torch.randn(64, 128)", "torch.randn(8192, 8192)", 2),
		"tight/1_big.py":                     strings.Replace(string(good), "torch.randn(64, 128)", "torch.randn(8192, 8192)", 2),
		"tight/suite.json":                   `{"max_mb": 512}`,
		"solutions/tight/1_big.py":           string(sol),
		"solutions/mini/1_good.py":           string(sol),
		"solutions/mini/5_big.py":            string(sol), // not run: its task is checked at shape level
		"solutions/mini/2_wrong_solution.py": strings.Replace(string(sol), "tl.maximum(", "tl.minimum(", 1),
	}
	for name, src := range files {
		os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(files["mini/4_constant.py"], "zeros_like") || !strings.Contains(files["mini/5_big.py"], "8192") ||
		!strings.Contains(files["solutions/mini/2_wrong_solution.py"], "tl.minimum(") {
		t.Fatal("fixture edits did not apply; the ci task or its solution changed")
	}
	manifest := filepath.Join(root, "manifest.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"tasks", "check", root, "--seeds", "2", "--manifest", manifest}, &stdout, &stderr)
	out := stdout.String()
	if code != exitFailed || !strings.Contains(stderr.String(), "4 of 6 tasks rejected") {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr.String(), out)
	}
	for _, want := range []string{
		"2_wrong_solution.py is incorrect",
		"importing the task raised ImportError: needs a GPU library",
		"degenerate reference",
		"mini/5_big  ", // valid, at shape level
		"solutions: 1 of 2 run correct, 1 not run (their tasks were checked at shape level only",
		"1_big.py: one forward call needs 768 MiB of inputs, parameters and outputs; a task may use at most 512 MiB",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	m, err := datasets.ReadManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tasks) != 2 || m.Tasks[0].ID != "mini/1_good" || m.Tasks[1].ID != "mini/5_big" {
		t.Fatalf("manifest tasks %+v", m.Tasks)
	}
	g, big := m.Tasks[0], m.Tasks[1]
	if g.Checked != "full" || g.DType != "float32" || g.Solution != "solutions/mini/1_good.py" || len(g.Tags) == 0 || g.Name == "" {
		t.Errorf("good entry %+v", g)
	}
	if big.Checked != "shapes" || big.Outputs[0].Shape[0] != 8192 || *big.MB < 700 {
		t.Errorf("big entry %+v", big)
	}
}

func TestTasksBadInput(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tasks", "check", empty}, "no task files"},
		{[]string{"tasks", "check", filepath.Join(empty, "missing")}, "no such file"},
		{[]string{"tasks", "check", "--depth", "deep", empty}, "--depth \"deep\""},
		{[]string{"tasks", "check", "--max-mb", "-1", empty}, "--max-mb -1"},
		{[]string{"tasks", "check"}, "requires at least 1 arg"},
		{[]string{"tasks", "list", empty}, "no task files"},
		{[]string{"tasks", "show", "--tasks", "../../datasets", "ci/no_such_task"}, "no task \"ci/no_such_task\""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), exitUsage, tt.want)
		}
	}
}

func TestTasksListAndShow(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"tasks", "list", "../../datasets/ci"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("list: exit %d %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "ci/2_row_softmax") || !strings.Contains(out, "softmax,reduction") ||
		!strings.Contains(out, "8 tasks in 1 suites") {
		t.Errorf("list output:\n%s", out)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"tasks", "show", "--tasks", "../../datasets/ci", "--prompt", "ci/7_gelu"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("show: exit %d %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "class Model") || !strings.Contains(out, "ModelNew") {
		t.Errorf("prompt:\n%s", out)
	}
}

// TestTasksCheckWarnsOfAReferenceFarFromItsExactAnswer: a valid bf16 task
// whose reference rounds sixteen times is kept, with the check's warning in
// the table and, in --json, the float64 pass's figure as the Go types read it.
func TestTasksCheckWarnsOfAReferenceFarFromItsExactAnswer(t *testing.T) {
	needPython(t)
	good, _ := os.ReadFile("../../datasets/ci/1_add_relu.py")
	drift := strings.Replace(string(good), "return torch.relu(x + y)",
		"for _ in range(16):\n            x = x * 1.0107\n        return x + y", 1)
	drift = strings.ReplaceAll(drift, "torch.randn(64, 128)", "torch.randn(64, 128, dtype=torch.bfloat16)")
	if !strings.Contains(drift, "1.0107") || !strings.Contains(drift, "bfloat16") {
		t.Fatal("fixture edits did not apply; the ci task changed")
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "mini"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "mini", "1_drift.py"), []byte(drift), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"tasks", "check", root, "--seeds", "2"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
	}
	if out := stdout.String(); !strings.Contains(out, "ok (warning: the reference is") || !strings.Contains(out, "declare ATOL = ") {
		t.Errorf("the table does not warn:\n%s", out)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"tasks", "check", root, "--seeds", "2", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr.String())
	}
	var got []struct {
		OK       bool         `json:"ok"`
		Warnings []string     `json:"warnings"`
		Verdict  eval.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(got) != 1 || !got[0].OK || len(got[0].Warnings) != 1 || got[0].Verdict.TaskInfo == nil {
		t.Fatalf("%s", stdout.String())
	}
	re := got[0].Verdict.TaskInfo.ReferenceError
	if re == nil || re.Used == nil || *re.Used <= 0.5 || re.Seed == nil || len(re.Index) != 2 || re.Reference == nil || re.Exact == nil {
		t.Fatalf("reference_error %+v", re)
	}
}

// A --manifest that could not be written is refused before any task runs,
// not after a check of minutes whose figures it could then not keep.
func TestTasksCheckRefusesAnUnusableManifestAtOnce(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(corrupt, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"a manifest that does not read": corrupt,
		"a folder that is a file":       filepath.Join(corrupt, "manifest.json"),
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := run(context.Background(), []string{"tasks", "check", "../../datasets/ci", "--manifest", path}, &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), "--manifest") || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused after %s: something ran first", d)
			}
		})
	}
}
