package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// The integration test runs the REAL Python zygote (CPU mode, Triton
// interpreter) through the Supervisor. It needs a Python with torch and
// triton, found like the binary finds it; without one it skips, unless
// KERNELGATE_REQUIRE_PYTHON=1 (CI), where it fails.

const addTask = `import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b

def get_inputs():
    return [torch.rand(64, 32), torch.rand(64, 32)]

def get_init_inputs():
    return []
`

const addKernelTemplate = `import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a + b %s, mask=mask)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        add_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024)
        return out
`

// huntSecrets defines kg_hunt(): what of the environment and of every /proc/PID/{cmdline,
// environ} looks like a secret, short enough for a task error's 200 characters.
const huntSecrets = `

def kg_hunt():
    import os, re
    found = [k + "=" + v for k, v in os.environ.items() if re.search("(?i)canary|key|token|secret", k + v)]
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                with open("/proc/%s/%s" % (pid, name), "rb") as f:
                    text = f.read().decode("latin-1")
            except OSError:
                continue
            found += re.findall("[^\\x00]*canary[^\\x00]*", text)
    return "HUNT " + " ".join(sorted(set(found)))
`

func realPython(t *testing.T) string {
	t.Helper()
	py, err := ResolvePython(os.Getenv(EnvPython))
	if err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	return py
}

func TestIntegrationRealZygoteCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	py := realPython(t)
	// Secrets in the gateway's environment, under names the harness never reads.
	canary := fmt.Sprintf("kgcanary-%d", time.Now().UnixNano())
	for _, k := range []string{"KG_CANARY_SECRET", "OPENAI_API_KEY", "KERNELGATE_SESSION_TOKEN"} {
		t.Setenv(k, canary)
	}
	s := New(Config{Python: py, Device: "cpu", Concurrency: 2, CacheDir: t.TempDir()},
		slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") != "1" {
			t.Skipf("python %s cannot run the zygote: %v", py, err)
		}
		t.Fatal(err)
	}
	defer s.Close()
	task := eval.Task{Name: "1_add", Path: "/inline/1_add.py", Source: addTask}
	opts := eval.DefaultOptions()
	opts.Seeds, opts.TimeoutS = 2, 300
	tests := []struct {
		name string
		code string
		want eval.Status
	}{
		{"honest", fmt.Sprintf(addKernelTemplate, ""), eval.StatusCorrect},
		{"wrong", fmt.Sprintf(addKernelTemplate, "+ 1.0"), eval.StatusIncorrect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := s.Evaluate(ctx, eval.Job{Task: task, Code: tt.code, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tt.want {
				t.Fatalf("status %q, want %q; feedback: %s; task_error: %s; output: %s",
					v.Status, tt.want, v.Feedback, v.TaskError, v.OutputTail)
			}
			if v.TimingMode != eval.TimingCPUInterpreter || v.Speedup != nil || v.CodeHash != eval.HashSource(tt.code) {
				t.Errorf("verdict fields: mode %q speedup %v code_hash %q", v.TimingMode, v.Speedup, v.CodeHash)
			}
		})
	}
	// Task and candidate code that look for secrets in their environment and in /proc
	// and raise with what they found: the gateway's never reach them.
	t.Run("no secret reaches task or candidate code", func(t *testing.T) {
		hunt := strings.Replace(addTask, "return a + b", "raise RuntimeError(kg_hunt())", 1) + huntSecrets
		for _, job := range []eval.Job{
			{Task: task, Code: strings.Replace(fmt.Sprintf(addKernelTemplate, ""), "a, b = a.contiguous()",
				"raise RuntimeError(kg_hunt())\n        a, b = a.contiguous()", 1) + huntSecrets, Options: opts},
			{Task: eval.Task{Name: "hunt", Path: "/inline/hunt.py", Source: hunt}, Code: fmt.Sprintf(addKernelTemplate, ""), Options: opts},
		} {
			v, err := s.Evaluate(ctx, job)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(v)
			if !strings.Contains(string(raw), "HUNT") {
				t.Fatalf("the hunt did not run: status %q feedback %q task_error %q", v.Status, v.Feedback, v.TaskError)
			}
			if strings.Contains(string(raw), "kgcanary") {
				t.Errorf("a secret of the gateway's environment reached the verdict: %s", raw)
			}
		}
	})
	// A task's own RTOL (verdict schema 1.4): the judge reads it from the source.
	t.Run("declared tolerance", func(t *testing.T) {
		declared := eval.Task{Name: "t", Path: "/tasks/t.py", Source: addTask + "\nRTOL = 0.25\n"}
		v, err := s.Evaluate(ctx, eval.Job{Task: declared, Code: fmt.Sprintf(addKernelTemplate, ""), Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != eval.StatusCorrect || v.Tolerance == nil || v.Tolerance.Source != "task" || v.Tolerance.Rtol != 0.25 {
			t.Fatalf("status %q tolerance %+v, want correct with the task's rtol 0.25; feedback: %s", v.Status, v.Tolerance, v.Feedback)
		}
	})
	// Task checks (protocol 1.1): the reference alone, with the code ignored.
	checks := []struct {
		name, source string
		want         eval.Status
		taskError    string
	}{
		{"valid task", addTask, eval.StatusCorrect, ""},
		{"constant output", strings.Replace(addTask, "return a + b", "return torch.ones_like(a)", 1), eval.StatusHarnessError, "degenerate reference"},
		{"reference raises", strings.Replace(addTask, "return a + b", "raise ValueError('bad shape')", 1), eval.StatusHarnessError, "ValueError: bad shape"},
	}
	for _, tt := range checks {
		t.Run("task check/"+tt.name, func(t *testing.T) {
			v, err := s.Evaluate(ctx, eval.Job{Task: eval.Task{Name: "t", Path: "/tasks/t.py", Source: tt.source}, Options: opts, TaskCheck: true})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tt.want || v.Compiled || !strings.Contains(v.TaskError, tt.taskError) || (tt.taskError == "") != (v.TaskError == "") {
				t.Fatalf("status %q compiled %v task_error %q, want %q with %q; feedback: %s", v.Status, v.Compiled, v.TaskError, tt.want, tt.taskError, v.Feedback)
			}
			if v.TaskHash != eval.HashSource(tt.source) {
				t.Errorf("task_hash %q", v.TaskHash)
			}
		})
	}
}
