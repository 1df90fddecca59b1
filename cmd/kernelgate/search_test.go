package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
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
		// refused before a search whose best kernel it could then not keep
		{"out under a file", append([]string{"search", "--task", task, "--out", task + "/best.py"}, llm...), "--out"},
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
	kernel := strings.TrimRight(honest, "\n") // as extracted, and hashed, on every path
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
	// A task of a suite under datasets/ goes by its suite id, as in adapt and /v1/searches.
	if obj["state"] != "done" || obj["steps"] != 2.0 || obj["tokens"] != 184.0 || best["status"] != "correct" || best["code"] != kernel ||
		obj["task_id"] != "ci/1_add_relu" {
		t.Fatalf("object: %v", obj)
	}
	if got := readFileT(t, out); got != kernel {
		t.Fatalf("--out holds %q", got)
	}
	rows := searchSteps(t, data)
	if len(rows) != 2 || rows[0].Seq+rows[1].Seq != 3 {
		t.Fatalf("search_steps rows: %+v", rows)
	}
	for _, r := range rows {
		if r.TaskID != "ci/1_add_relu" {
			t.Errorf("row %d: task_id %q, want ci/1_add_relu", r.Seq, r.TaskID)
		}
		// A failed step's unknowns are null; an answer without code is the
		// model's, scored 0.
		failed := r.Node == nil && r.Error != nil && strings.Contains(*r.Error, "no code") && r.Failure != nil && *r.Failure == "answer" &&
			r.Reward != nil && *r.Reward == 0 && r.Code == nil && r.Correct == nil && r.Status == nil && r.ErrorSignature == nil
		made := r.Correct != nil && *r.Correct && r.Code != nil && *r.Code == kernel && r.Error == nil && r.Failure == nil
		if r.Seq == 1 && !failed || r.Seq == 2 && !made {
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

// Ctrl-C mid-search: exit 130, the step taken is in search_steps, the best
// kernel so far is in --out, and the command line printed for --resume
// finishes the search without asking the LLM for that step again.
func TestSearchInterruptAndResume(t *testing.T) {
	needPython(t)
	honest := readFileT(t, "../../datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t, llmtest.Reply("```python\n"+honest+"```").Once(), llmtest.Hang().Once())
	data := t.TempDir()
	// --out keeps the best kernel out of the package directory (the default is ./best_<id>.py).
	out := filepath.Join(t.TempDir(), "best.py")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"search", "--task", "../../datasets/ci/1_add_relu.py", "--steps", "3", "--policy", "sample",
			"--llm-url", srv.URL(), "--model", "m", "--data", data, "--device", "cpu", "--json", "--out", out}, &stdout, &stderr)
	}()
	kgtest.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if len(srv.Requests()) < 2 || srv.InFlight() != 1 {
			return fmt.Errorf("the second LLM call never started; stderr %s", stderr.String())
		}
		return nil
	})
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
	// The kernel as extracted (trailing white space trimmed, as every path hashes it).
	if got := readFileT(t, out); got != strings.TrimRight(honest, "\n") {
		t.Fatalf("--out after Ctrl-C holds %q, want the correct kernel of step 1", got)
	}
	if !strings.Contains(stderr.String(), "stopped after 1/3 steps; best kernel (node 1, correct) written to "+out) {
		t.Fatalf("stderr does not say where the best kernel went: %s", stderr.String())
	}
	m := regexp.MustCompile(`continue it with: kernelgate (search --resume (s_[0-9a-f]+) .*)\n`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no resume command line on stderr: %s", stderr.String())
	}
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	srv.Add(llmtest.Reply("```python\n" + honest + "```"))
	var resumed bytes.Buffer
	var errb syncBuffer
	if code := run(context.Background(), strings.Fields(m[1]), &resumed, &errb); code != exitOK {
		t.Fatalf("%s: exit %d; stderr %s", m[1], code, errb.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(resumed.Bytes(), &obj); err != nil || obj["state"] != "done" || obj["steps"] != 3.0 || obj["search_id"] != m[2] || obj["out"] != out {
		t.Fatalf("resumed: %v, %v", obj, err)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("LLM requests %d, want 4 (1, the one cut by Ctrl-C, then 2 more)", n)
	}
	if rows := searchSteps(t, data); len(rows) != 3 {
		t.Fatalf("search_steps rows: %d, want 3", len(rows))
	}
}

// --resume with --steps: a smaller budget is refused before anything runs
// (exit 2), a larger one runs the extra steps of a search that had spent
// its budget, none keeps it.
func TestSearchResumeSteps(t *testing.T) {
	needPython(t)
	honest := readFileT(t, "../../datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t, llmtest.Reply("```python\n"+honest+"```"))
	args := []string{"--llm-url", srv.URL(), "--model", "m", "--data", t.TempDir(), "--device", "cpu", "--json",
		"--out", filepath.Join(t.TempDir(), "best.py")}
	search := func(want int, extra ...string) (map[string]any, string) {
		t.Helper()
		var stdout bytes.Buffer
		var stderr syncBuffer
		if code := run(context.Background(), append(extra, args...), &stdout, &stderr); code != want {
			t.Fatalf("%v: exit %d, want %d; stderr %s", extra, code, want, stderr.String())
		}
		var obj map[string]any
		if want == exitOK {
			if err := json.Unmarshal(stdout.Bytes(), &obj); err != nil {
				t.Fatalf("%v: stdout %q: %v", extra, stdout.String(), err)
			}
		}
		return obj, stderr.String()
	}
	obj, _ := search(exitOK, "search", "--task", "../../datasets/ci/1_add_relu.py", "--steps", "2", "--policy", "sample")
	id, _ := obj["search_id"].(string)
	if obj["state"] != "done" || obj["steps"] != 2.0 {
		t.Fatalf("first run: %v", obj)
	}
	if _, stderr := search(exitUsage, "search", "--resume", id, "--steps", "1"); !strings.Contains(stderr, "budget of 2 steps (2 taken)") {
		t.Fatalf("a smaller --steps: stderr %s", stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("LLM requests %d after the refusal, want 2", n)
	}
	if obj, stderr := search(exitOK, "search", "--resume", id, "--steps", "4"); obj["state"] != "done" || obj["steps"] != 4.0 ||
		!strings.Contains(stderr, "resumed (sample, 2 of 4 steps taken)") {
		t.Fatalf("extended: %v; stderr %s", obj, stderr)
	}
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("LLM requests %d, want 4 (2, then 2 more)", n)
	}
	if obj, stderr := search(exitOK, "search", "--resume", id); obj["steps"] != 4.0 || !strings.Contains(stderr, "had ended (done, 4/4 steps)") {
		t.Fatalf("resumed without --steps: %v; stderr %s", obj, stderr)
	}
}

// The progress bar's text: the best speedup where timings compare (GPU),
// else the best node's status; never "-" once a kernel was judged.
func TestSearchProgressText(t *testing.T) {
	sp := 1.5
	cpu := func(node, best int, st eval.Status) runner.Event {
		v := eval.Verdict{Status: st, Compiled: st != eval.StatusCompileError, Correct: st == eval.StatusCorrect,
			TimingMode: eval.TimingCPUInterpreter}
		return runner.Event{Seq: node, Step: rollout.Step{Node: node, BestNode: best, Verdict: &v, TokensIn: 10, TokensOut: 5}}
	}
	gpu := func(node int) runner.Event {
		v := eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true, Speedup: &sp}
		return runner.Event{Seq: node, Step: rollout.Step{Node: node, BestNode: node, Verdict: &v, BestSpeedup: &sp, TokensIn: 10, TokensOut: 5}}
	}
	failed := runner.Event{Seq: 1, Step: rollout.Step{Error: "no code in the answer", TokensIn: 10, TokensOut: 5}}
	tests := []struct {
		name string
		evs  []runner.Event
		want string
	}{
		{"nothing yet", nil, "best -, pass 0/0, 0 tokens"},
		{"no node", []runner.Event{failed}, "best -, pass 0/0, 15 tokens"},
		{"cpu, every step correct", []runner.Event{cpu(1, 1, eval.StatusCorrect), cpu(2, 1, eval.StatusCorrect)},
			"best correct (no timing on CPU), pass 2/2, 30 tokens"},
		{"cpu, none correct", []runner.Event{cpu(1, 1, eval.StatusCompileError), cpu(2, 2, eval.StatusIncorrect)},
			"best incorrect, pass 0/2, 30 tokens"},
		{"cpu, a worse node after the best", []runner.Event{cpu(1, 1, eval.StatusCorrect), cpu(2, 1, eval.StatusIncorrect)},
			"best correct (no timing on CPU), pass 1/2, 30 tokens"},
		{"gpu", []runner.Event{gpu(1)}, "best 1.50x, pass 1/1, 15 tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p progressState
			for _, ev := range tt.evs {
				p.add(ev)
			}
			if got := p.String(); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A --task file of a suite under datasets/ goes by its suite id; a file
// outside the suites (here an edited copy) by its source (api/<hash>).
func TestSearchTaskID(t *testing.T) {
	edited := filepath.Join(t.TempDir(), "1_add_relu.py")
	if err := os.WriteFile(edited, []byte(readFileT(t, "../../datasets/ci/1_add_relu.py")+"\n# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, wantID string }{
		{"../../datasets/ci/1_add_relu.py", "ci/1_add_relu"},
		{"../../datasets/level2/" + firstPy(t, "../../datasets/level2"), "level2/"},
		{edited, ""},
	}
	g := &globals{stderr: io.Discard, logLevel: "warn"}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var req runner.Request
			reg, err := g.searchTask(t.Context(), tt.path, &req)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantID == "" && (req.TaskID != "" || req.Reference != readFileT(t, tt.path)):
				t.Fatalf("task_id %q, want the source inline", req.TaskID)
			case tt.wantID != "" && (!strings.HasPrefix(req.TaskID, tt.wantID) || req.Reference != ""):
				t.Fatalf("task_id %q (reference %d bytes), want %s...", req.TaskID, len(req.Reference), tt.wantID)
			case tt.wantID != "":
				if _, err := reg.Get(t.Context(), req.TaskID); err != nil {
					t.Fatalf("the registry lacks %s: %v", req.TaskID, err)
				}
			}
		})
	}
}

func firstPy(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	if len(files) == 0 {
		t.Fatalf("no task in %s", dir)
	}
	return filepath.Base(files[0])
}

// What Ctrl-C prints: where the best kernel went (or that there is none
// yet) and the command line that resumes the search, with this one's
// flags less those the search keeps.
func TestSearchInterruptReport(t *testing.T) {
	correct := &eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true}
	wrong := &eval.Verdict{Status: eval.StatusIncorrect, Compiled: true}
	out := filepath.Join(t.TempDir(), "my best.py")
	tests := []struct {
		name string
		best *runner.Best
		want string
	}{
		{"none", nil, "stopped after 2/5 steps; no kernel compiled yet, nothing written"},
		{"incorrect", &runner.Best{Node: 2, Verdict: wrong, Code: "wrong"},
			"stopped after 2/5 steps; no correct kernel yet: the best so far (node 2, incorrect) written to " + out},
		{"correct", &runner.Best{Node: 1, Verdict: correct, Code: "right"},
			"stopped after 2/5 steps; best kernel (node 1, correct) written to " + out},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(out)
			var stderr bytes.Buffer
			g := &globals{stdout: io.Discard, stderr: &stderr}
			root := &cobra.Command{Use: "kernelgate"}
			cmd := newSearchCmd(g)
			root.AddCommand(cmd)
			if err := cmd.ParseFlags([]string{"--task", "t.py", "--steps", "5", "--llm-url", "http://127.0.0.1:1/v1",
				"--model", "m", "--json", "--out", out, "--data", "/tmp/a b"}); err != nil {
				t.Fatal(err)
			}
			st := runner.Status{SearchID: "s_0123456789abcdef", State: runner.StateCancelled, Steps: 2, StepsBudget: 5, Best: tt.best}
			g.reportInterrupted(cmd, st, out)
			wantLine := "kernelgate: continue it with: kernelgate search --resume s_0123456789abcdef --data '/tmp/a b' --json " +
				"--llm-url http://127.0.0.1:1/v1 --model m --out '" + out + "'\n"
			if got := stderr.String(); !strings.Contains(got, tt.want) || !strings.HasSuffix(got, wantLine) {
				t.Fatalf("stderr %q, want %q and then %q", got, tt.want, wantLine)
			}
			b, err := os.ReadFile(out)
			if tt.best == nil && err == nil || tt.best != nil && string(b) != tt.best.Code {
				t.Fatalf("--out holds %q (%v)", b, err)
			}
		})
	}
}
