package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/llmtest"
)

func TestSearchBadFlags(t *testing.T) {
	llm := []string{"--llm-url", "http://127.0.0.1:1/v1", "--model", "m"}
	task := "../../datasets/ci/1_add_relu.py"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no llm url", []string{"search", "--task", task}, "--llm-url and --model"},
		{"no task", append([]string{"search"}, llm...), "--task is required"},
		{"missing task file", append([]string{"search", "--task", "/nonexistent.py"}, llm...), "no such file"},
		{"steps", append([]string{"search", "--task", task, "--steps", "0"}, llm...), "--steps must be in 1..10000"},
		{"policy", append([]string{"search", "--task", task, "--policy", "greedy"}, llm...), "--policy"},
		{"retries", append([]string{"search", "--task", task, "--llm-retries", "-1"}, llm...), "--llm-retries"},
		{"adapt no tasks", append([]string{"adapt"}, llm...), "required flag"},
		{"adapt steps", append([]string{"adapt", "--tasks", "../../datasets/ci", "--steps", "0"}, llm...), "--steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || stdout.Len() != 0 {
				t.Fatalf("stderr %q (want %q), stdout %q", stderr.String(), tt.want, stdout.String())
			}
		})
	}
}

func needPython(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	if _, err := harness.ResolvePython(os.Getenv(harness.EnvPython)); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	t.Setenv(harness.EnvCacheDir, t.TempDir())
	t.Setenv(harness.EnvConcurrency, "1")
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// searchSteps reads every search_steps row under data.
func searchSteps(t *testing.T, data string) []export.SearchStep {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(data, "parquet", "table="+export.TableSearchSteps, "date=*", "part-*.parquet"))
	var rows []export.SearchStep
	for _, f := range files {
		got, err := parquet.ReadFile[export.SearchStep](f)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, got...)
	}
	return rows
}

// `search --json` on the real harness (CPU) with a scripted LLM: exactly one
// object on stdout, the best kernel in --out, every step in search_steps.
func TestSearchJSON(t *testing.T) {
	needPython(t)
	honest := readFileT(t, "../../datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t,
		llmtest.Reply("No code, just thoughts.").WithUsage(40, 4).Once(),
		llmtest.Reply("```python\n"+honest+"```").WithUsage(40, 100),
	)
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "best.py")
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"search", "--task", "../../datasets/ci/1_add_relu.py", "--steps", "2",
		"--policy", "sample", "--llm-url", srv.URL(), "--model", "m", "--data", data, "--out", out, "--json", "--device", "cpu"},
		&stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	var obj map[string]any
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	if dec.More() {
		t.Fatal("stdout holds more than one object")
	}
	for _, k := range []string{"search_id", "policy", "steps", "tokens", "best", "actions"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("missing %q in %v", k, obj)
		}
	}
	best, _ := obj["best"].(map[string]any)
	if obj["state"] != "done" || obj["steps"] != 2.0 || obj["tokens"] != 184.0 || best["status"] != "correct" || best["code"] != honest {
		t.Fatalf("object: %v", obj)
	}
	if got := readFileT(t, out); got != honest {
		t.Fatalf("--out holds %q", got)
	}
	rows := searchSteps(t, data)
	if len(rows) != 2 || rows[0].Seq+rows[1].Seq != 3 {
		t.Fatalf("search_steps rows: %+v", rows)
	}
	for _, r := range rows {
		if r.Seq == 1 && (r.Node != nil || !strings.Contains(r.Error, "no code")) || r.Seq == 2 && (!r.Correct || r.Code != honest) {
			t.Errorf("row %d: %+v", r.Seq, r)
		}
	}
}

// An unreachable endpoint: the search runs, every step fails, it ends
// "failed" with the reason; exit 1 with the JSON still printed.
func TestSearchUnreachableLLM(t *testing.T) {
	needPython(t)
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"search", "--task", "../../datasets/ci/1_add_relu.py", "--steps", "20",
		"--llm-url", "http://127.0.0.1:1/v1", "--model", "m", "--llm-retries", "0", "--data", t.TempDir(), "--json", "--device", "cpu",
		"--out", filepath.Join(t.TempDir(), "best.py")},
		&stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitFailed, stderr.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if obj["state"] != "failed" || !strings.Contains(obj["error"].(string), "llm") || obj["best"] != nil {
		t.Fatalf("object %v", obj)
	}
	if !strings.Contains(stderr.String(), "failed") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// `adapt` over a two-task suite: one line per task and the memory summary.
func TestAdaptSuite(t *testing.T) {
	needPython(t)
	suite := filepath.Join(t.TempDir(), "mini")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"1_add_relu.py", "7_gelu.py"} {
		if err := os.WriteFile(filepath.Join(suite, f), []byte(readFileT(t, "../../datasets/ci/"+f)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	honest := readFileT(t, "../../datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t, llmtest.Reply("```python\n"+honest+"```"))
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"adapt", "--tasks", suite, "--steps", "1", "--policy", "sample",
		"--llm-url", srv.URL(), "--model", "m", "--data", t.TempDir(), "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "mini/1_add_relu: ") || !strings.Contains(lines[0], "correct") ||
		!strings.HasPrefix(lines[1], "mini/7_gelu: ") || !strings.HasPrefix(lines[2], "skills: 0 created") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
}

// Ctrl-C mid-search: exit 130, the step taken is in search_steps, and
// --resume finishes the search without asking the LLM for that step again.
func TestSearchInterruptAndResume(t *testing.T) {
	needPython(t)
	honest := readFileT(t, "../../datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t, llmtest.Reply("```python\n"+honest+"```").Once(), llmtest.Hang().Once())
	data := t.TempDir()
	// --out keeps the best kernel out of the package directory (the default is ./best_<id>.py).
	args := []string{"--llm-url", srv.URL(), "--model", "m", "--data", data, "--device", "cpu", "--json",
		"--out", filepath.Join(t.TempDir(), "best.py")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"search", "--task", "../../datasets/ci/1_add_relu.py", "--steps", "3", "--policy", "sample"}, args...), &stdout, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(srv.Requests()) < 2 || srv.InFlight() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the second LLM call never started; stderr %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the scripted server
	}
	cancel()
	select {
	case code := <-done:
		if code != exitAborted {
			t.Fatalf("exit %d, want %d; stderr %s", code, exitAborted, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Ctrl-C did not stop the search")
	}
	if rows := searchSteps(t, data); len(rows) != 1 {
		t.Fatalf("search_steps rows after Ctrl-C: %d, want 1 (flushed before exit)", len(rows))
	}
	m := regexp.MustCompile(`search (s_[0-9a-f]+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no search id on stderr: %s", stderr.String())
	}
	srv.Add(llmtest.Reply("```python\n" + honest + "```"))
	var out bytes.Buffer
	var errb syncBuffer
	if code := run(context.Background(), append([]string{"search", "--resume", m[1]}, args...), &out, &errb); code != exitOK {
		t.Fatalf("resume exit %d; stderr %s", code, errb.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil || obj["state"] != "done" || obj["steps"] != 3.0 || obj["search_id"] != m[1] {
		t.Fatalf("resumed: %v, %v", obj, err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("LLM requests %d, want 4 (1, the one cut by Ctrl-C, then 2 more)", n)
	}
	if rows := searchSteps(t, data); len(rows) != 3 {
		t.Fatalf("search_steps rows: %d, want 3", len(rows))
	}
}
