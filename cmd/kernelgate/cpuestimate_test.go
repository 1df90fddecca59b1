package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// bigTask is sized for a GPU: one call reads 1 GiB and writes 1 GiB, so the
// interpreter needs ~576 s at 5 seeds; its meta pass takes milliseconds.
const bigTask = `"""ReLU over a 16384x16384 fp32 matrix (sized for a GPU)."""
import torch
import torch.nn as nn

TAGS = ["activation", "fp32"]


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16384, 16384)]


def get_init_inputs():
    return []
`

func i64(n int64) *int64 { return &n }

// fakeMeta answers task checks as the harness's meta pass does, and counts them.
type fakeMeta struct {
	mu   sync.Mutex
	jobs []eval.Job
	info map[string]*eval.TaskInfo // by task name; missing: a harness error
}

func (f *fakeMeta) Evaluate(_ context.Context, job eval.Job) (eval.Verdict, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = append(f.jobs, job)
	info, ok := f.info[job.Task.Name]
	if !ok {
		return eval.Verdict{}, errors.New("zygote gone")
	}
	return eval.Verdict{Status: eval.StatusCorrect, TaskInfo: info}, nil
}

func metaInfo(bytes, flops int64) *eval.TaskInfo {
	return &eval.TaskInfo{InputBytes: i64(bytes / 2), ParamBytes: i64(0), OutputBytes: i64(bytes / 2), FLOPs: i64(flops), Depth: "shapes"}
}

func TestEstimateCPU(t *testing.T) {
	d := eval.DefaultOptions() // 5 seeds, 120 s
	tests := []struct {
		name   string
		work   taskWork
		seeds  int
		over   bool
		approx float64
	}{
		{"ci size", taskWork{MiB: 0.1}, 5, false, 0.028125},
		{"level1 1 GiB", taskWork{MiB: 1024}, 5, true, 288},
		{"level1 1 GiB, 1 seed", taskWork{MiB: 1024}, 1, false, 32},
		{"GEMM 17 GFLOP", taskWork{MiB: 48, GFLOP: 17.2}, 5, true, 168},
		{"just under", taskWork{MiB: 400}, 5, false, 112.5},
		{"just over", taskWork{MiB: 430}, 5, true, 121},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := d
			o.Seeds = tt.seeds
			e := estimateCPU("t", tt.work, o)
			if e.Over() != tt.over || e.Seconds < tt.approx*0.99 || e.Seconds > tt.approx*1.01 || e.Calls != 2*tt.seeds-1 {
				t.Errorf("%+v: over %v, want %v, ~%.1f s", e, e.Over(), tt.over, tt.approx)
			}
		})
	}
	o := d
	o.TimeoutS = 600
	if e := estimateCPU("t", taskWork{MiB: 1024}, o); e.Over() {
		t.Errorf("a 600 s timeout fits %v", e)
	}
}

// The manifest's figures when it has the task (no meta pass), the meta pass
// otherwise, and no estimate when neither gives one.
func TestSizer(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "level1")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, src string) eval.Task {
		p := filepath.Join(suite, name+".py")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return eval.Task{Name: name, Path: p, Source: src}
	}
	listed := write("1_big", bigTask)
	edited := write("2_edited", `"""Another docstring than the manifest's."""`+bigTask[strings.Index(bigTask, "\n"):])
	unlisted := write("3_new", bigTask)
	broken := write("4_broken", "x = (")
	mb, gf := 2048.0, 0.0
	m := datasets.Manifest{Tasks: []datasets.Entry{
		{ID: "level1/1_big", Name: "ReLU over a 16384x16384 fp32 matrix (sized for a GPU).", MB: &mb, GFLOP: &gf},
		{ID: "level1/2_edited", Name: "ReLU over a 16384x16384 fp32 matrix (sized for a GPU).", MB: &mb, GFLOP: &gf},
	}}
	if err := m.Write(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	ev := &fakeMeta{info: map[string]*eval.TaskInfo{
		"2_edited": metaInfo(64<<20, 3e9),
		"3_new":    metaInfo(1<<30, 0),
	}}
	s := newSizer(ev, eval.DefaultOptions())
	got, err := s.estimateAll(context.Background(), []workTarget{fileTarget(listed), fileTarget(edited), fileTarget(unlisted), fileTarget(broken)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		from string
		mib  float64
		over bool
	}{{"manifest", 2048, true}, {"meta pass", 64, false}, {"meta pass", 1024, true}, {"", 0, false}}
	for i, w := range want {
		g := got[i]
		if g.Est.Work.From != w.from && !(w.from == "" && g.Err != nil) || g.Est.Work.MiB != w.mib || g.Est.Over() != w.over {
			t.Errorf("target %d: %+v (err %v), want %+v", i, g.Est, g.Err, w)
		}
	}
	if got[1].Est.Work.GFLOP != 3 || got[3].Err == nil {
		t.Errorf("edited %+v, broken err %v", got[1].Est, got[3].Err)
	}
	if len(ev.jobs) != 3 {
		t.Fatalf("%d meta passes, want 3 (the manifest's task needs none)", len(ev.jobs))
	}
	for _, j := range ev.jobs {
		if !j.TaskCheck || j.Check == nil || j.Check.Depth != "shapes" || j.Code != "" {
			t.Errorf("meta pass job %+v", j)
		}
	}
}

// eval's gate: the refusal names the figures and the way out; --force runs
// with a warning; a long but feasible estimate is said; no estimate is said.
func TestFitsCPU(t *testing.T) {
	ev := &fakeMeta{info: map[string]*eval.TaskInfo{"big": metaInfo(2<<30, 0), "mid": metaInfo(64<<20, 0), "tiny": metaInfo(1<<10, 0)}}
	o := eval.DefaultOptions()
	target := func(name string) workTarget { return workTarget{Task: eval.Task{Name: name}} }
	tests := []struct {
		name, task string
		force      bool
		errHas     []string
		stderrHas  string
	}{
		{"refused", "big", false, []string{"big is too large for CPU mode (no GPU): 2048.0 MiB and 0.0 GFLOP per call (meta pass)", "about 576 s for 9 calls",
			"120 s timeout", "run it on a GPU", "--force"}, ""},
		{"forced", "big", true, nil, "--force: CPU mode: big: 2048.0 MiB"},
		{"long", "mid", false, nil, "CPU mode: mid: 64.0 MiB and 0.0 GFLOP per call (meta pass): about 18 s"},
		{"short", "tiny", false, nil, ""},
		{"no estimate", "gone", false, nil, "no estimate of gone (zygote gone); evaluating it anyway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			err := fitsCPU(context.Background(), &w, ev, target(tt.task), o, tt.force)
			if (err != nil) != (tt.errHas != nil) {
				t.Fatalf("err %v", err)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if tt.stderrHas == "" && w.Len() > 0 || !strings.Contains(w.String(), tt.stderrHas) {
				t.Errorf("stderr %q, want %q", w.String(), tt.stderrHas)
			}
		})
	}
}

// fitAdaptCPU skips by id and says so on one line per task.
func TestFitAdaptCPU(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mix")
	suite := []tasks.Task{
		tasks.New("mix/1_big", bigTask, tasks.OriginSuite, time.Time{}),
		tasks.New("mix/2_small", bigTask, tasks.OriginSuite, time.Time{}),
	}
	ev := &fakeMeta{info: map[string]*eval.TaskInfo{"1_big": metaInfo(2<<30, 0), "2_small": metaInfo(1<<20, 0)}}
	var w bytes.Buffer
	skip, err := fitAdaptCPU(context.Background(), &w, ev, 1, suite, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(skip) != 1 || !skip["mix/1_big"] || !strings.HasPrefix(w.String(), "mix/1_big: skipped: too large for CPU mode") ||
		strings.Count(w.String(), "\n") != 1 {
		t.Errorf("skip %v, out %q", skip, w.String())
	}
	if len(ev.jobs) != 2 || ev.jobs[0].Options.TimeoutS != eval.DefaultOptions().TimeoutS {
		t.Errorf("jobs %+v", ev.jobs)
	}
}

// The command on the real harness: eval refuses a task whose meta pass is
// over the threshold at once, before any evaluation, and says what to do.
func TestEvalRefusesTooLargeInCPUMode(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	task, kernel := filepath.Join(dir, "big.py"), filepath.Join(dir, "k.py")
	if err := os.WriteFile(task, []byte(bigTask), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kernel, []byte("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	code, stdout, stderr := runCmd(t, "eval", "--task", task, "--kernel", kernel, "--device", "cpu")
	if code != exitFailed || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, s := range []string{"big is too large for CPU mode (no GPU): 2048.0 MiB and 0.0 GFLOP per call (meta pass)", "120 s timeout", "--force"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q: %s", s, stderr)
		}
	}
	if d := time.Since(t0); d > 60*time.Second {
		t.Errorf("refused after %s", d)
	}
}

// runOnBigTask writes bigTask to dir/name and runs args (which name it as
// FILE) in CPU mode against a scripted LLM: exit code, stdout, stderr and
// the LLM calls made.
func runOnBigTask(t *testing.T, dir, name string, args ...string) (int, string, string, int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(bigTask), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Reply("```python\nx = 1\n```"))
	var stdout bytes.Buffer
	var stderr syncBuffer
	args = append(args, "--llm-url", srv.URL(), "--model", "m", "--data", t.TempDir(), "--device", "cpu")
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String(), len(srv.Requests())
}

// adapt over a suite with nothing the interpreter can finish: every task is
// skipped with its line before any search starts (no LLM call), exit 1.
func TestAdaptSkipsTooLargeInCPUMode(t *testing.T) {
	needPython(t)
	suite := filepath.Join(t.TempDir(), "huge")
	code, stdout, stderr, calls := runOnBigTask(t, suite, "1_big.py", "adapt", "--tasks", suite, "--steps", "1")
	if code != exitFailed || !strings.HasPrefix(stdout, "huge/1_big: skipped: too large for CPU mode") ||
		!strings.Contains(stderr, "every task of "+suite+" is too large for CPU mode") || calls != 0 {
		t.Fatalf("exit %d, %d LLM calls; stdout %q; stderr %s", code, calls, stdout, stderr)
	}
}

// search in CPU mode refuses a task the interpreter cannot finish before any
// LLM call: every step would be a timeout.
func TestSearchRefusesTooLargeInCPUMode(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	code, _, stderr, calls := runOnBigTask(t, dir, "big.py", "search", "--task", filepath.Join(dir, "big.py"), "--steps", "2")
	if code != exitFailed || !strings.Contains(stderr, "big is too large for CPU mode") || !strings.Contains(stderr, "--force") || calls != 0 {
		t.Fatalf("exit %d, %d LLM calls; stderr %s", code, calls, stderr)
	}
}
