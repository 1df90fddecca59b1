package rollout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// fakeLLM answers each call with respond(req, n), n counting the calls of
// that purpose from 0. Each answer costs 100 prompt and 50 completion tokens.
// Calls are numbered c1, c2, ... as a logger names them (Completion.CallID).
// With block set, a call waits for its context instead (an endless answer).
type fakeLLM struct {
	respond func(req Request, n int) (string, error)
	block   bool

	mu    sync.Mutex
	calls []Request
	n     map[string]int
}

func (f *fakeLLM) Complete(ctx context.Context, req Request) (Completion, error) {
	f.mu.Lock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	n := f.n[req.Purpose]
	f.n[req.Purpose]++
	f.calls = append(f.calls, req)
	id := fmt.Sprintf("c%d", len(f.calls))
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return Completion{CallID: id}, ctx.Err()
	}
	text, err := f.respond(req, n)
	if err != nil {
		return Completion{CallID: id}, err
	}
	return Completion{Text: text, Model: "fake-model", PromptTokens: 100, CompletionTokens: 50,
		Latency: time.Millisecond, FinishReason: "stop", CallID: id}, nil
}

func (f *fakeLLM) purposes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Purpose)
	}
	return out
}

// fakeEval judges code by markers in it: "BROKEN" does not compile,
// "WRONG" compiles but is incorrect, "SPEEDUP=x" is correct at x times the
// reference (scaled by 10% per doubling of BLOCK_SIZE from 128, so that a
// tune shows), and anything else is correct without a speedup (as on the
// CPU interpreter).
type fakeEval struct {
	mu   sync.Mutex
	jobs []eval.Job
}

var (
	speedupRE = regexp.MustCompile(`SPEEDUP=([0-9.]+)`)
	blockRE   = regexp.MustCompile(`BLOCK_SIZE = (\d+)`)
)

func (f *fakeEval) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return eval.Verdict{}, err
	}
	code := job.Code
	v := eval.Verdict{SchemaVersion: eval.SchemaVersion, TaskName: job.Task.Name, CodeHash: eval.HashSource(code)}
	switch {
	case strings.Contains(code, "BROKEN"):
		v.Status = eval.StatusCompileError
		v.ErrorSignature = "NameError: name 'tl' is not defined"
		v.Feedback = "NameError: name 'tl' is not defined\n  at line 3"
	case strings.Contains(code, "WRONG"):
		v.Status, v.Compiled = eval.StatusIncorrect, true
		v.Feedback = "output mismatch: max abs error 0.5"
		v.ErrorSignature = "mismatch"
	default:
		v.Status, v.Compiled, v.Correct, v.TritonLaunches = eval.StatusCorrect, true, true, 1
		zero := 0.0
		v.MaxAbsError = &zero
		if m := speedupRE.FindStringSubmatch(code); m != nil {
			s, _ := strconv.ParseFloat(m[1], 64)
			if b := blockRE.FindStringSubmatch(code); b != nil {
				n, _ := strconv.Atoi(b[1])
				s *= 1 + 0.1*math.Log2(float64(n)/128)
			}
			v.Speedup = &s
			v.Runtime = &eval.Runtime{MedianMS: 10 / s}
		}
	}
	return v, nil
}

func (f *fakeEval) codes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, j := range f.jobs {
		out = append(out, j.Code)
	}
	return out
}

// fakeExtract is the engine's own minimal Extractor: fenced python blocks
// and SEARCH/REPLACE edits, as the tuner's prompt asks for them.
type fakeExtract struct{}

var (
	fenceRE = regexp.MustCompile("(?s)```python\n(.*?)```")
	editRE  = regexp.MustCompile(`(?s)<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE`)
)

func (fakeExtract) Code(text string) (string, bool) {
	m := fenceRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}

func (fakeExtract) Verdict(_, _ string, v eval.Verdict) eval.Verdict { return v }

func (fakeExtract) Edits(text string) ([]Edit, error) {
	var out []Edit
	for _, m := range editRE.FindAllStringSubmatch(text, -1) {
		out = append(out, Edit{Search: m[1], Replace: m[2]})
	}
	if len(out) == 0 && strings.Contains(text, "<<<<<<< SEARCH") {
		return nil, errors.New("malformed edit block")
	}
	return out, nil
}

func (fakeExtract) Apply(code string, edits []Edit) (string, error) {
	for i, e := range edits {
		if !strings.Contains(code, e.Search) {
			return "", fmt.Errorf("edit %d: search text not found", i+1)
		}
		code = strings.Replace(code, e.Search, e.Replace, 1)
	}
	return code, nil
}

// fakeSkills returns its skills for any signature and records the calls.
type fakeSkills struct {
	skills []Skill
	mu     sync.Mutex
	sigs   []string
	obs    []Observation
}

func (f *fakeSkills) Retrieve(ctx context.Context, sig string, k int) ([]Skill, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sigs = append(f.sigs, sig)
	if len(f.skills) > k {
		return f.skills[:k], nil
	}
	return f.skills, nil
}

func (f *fakeSkills) Observe(ctx context.Context, o Observation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.obs = append(f.obs, o)
	return nil
}

// kernel is a Triton-shaped candidate carrying the fake evaluator's marker.
func kernel(marker string) string {
	return fmt.Sprintf(`import torch
import triton
import triton.language as tl

# %s
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        BLOCK_SIZE = 128
        grid = (triton.cdiv(x.numel(), BLOCK_SIZE),)
        add_kernel[grid](x, y, out, x.numel(), BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
        return out
`, marker)
}

func fenced(code string) string { return "Here it is:\n```python\n" + code + "```\n" }

func edit(search, replace string) string {
	return "<<<<<<< SEARCH\n" + search + "\n=======\n" + replace + "\n>>>>>>> REPLACE\n"
}

const taskSource = `import torch

class Model(torch.nn.Module):
    def forward(self, x, y):
        return x + y

def get_inputs():
    return [torch.randn(1024), torch.randn(1024)]

def get_init_inputs():
    return []
`

// testConfig is DefaultConfig for a small test search.
func testConfig(policy string, steps int) Config {
	c := DefaultConfig()
	c.SearchID, c.TaskID, c.TaskSource, c.GPUName = "s1", "add", taskSource, "NVIDIA H200"
	c.Policy, c.Steps, c.Seed = policy, steps, 7
	return c
}
