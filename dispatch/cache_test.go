package dispatch

import (
	"encoding/hex"
	"math"
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

func TestCacheKey(t *testing.T) {
	base := Job{ID: "b1-00000", BatchID: "b1", Job: eval.Job{Task: eval.Task{Name: "t", Path: "/p", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
		RewardFn: "binary"}
	h200 := Env{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	keys := func(t *testing.T, j Job, e Env) (work, cache string) {
		t.Helper()
		w, err := WorkKey(j)
		if err != nil {
			t.Fatal(err)
		}
		c, err := CacheKey(j, e)
		if err != nil {
			t.Fatal(err)
		}
		return w, c
	}
	wantWork, wantCache := keys(t, base, h200)
	for _, k := range []string{wantWork, wantCache} {
		if _, err := hex.DecodeString(k); err != nil || len(k) != 64 {
			t.Fatalf("key %q is not hex sha256", k)
		}
	}
	if wantWork == wantCache {
		t.Fatal("the cache key is the work key: the environment is not in it")
	}
	tests := []struct {
		name   string
		job    func(*Job)
		env    func(*Env)
		work   bool // same work key
		cached bool // same cache key
	}{
		{"other ids, index, reward_fn, task name and path", func(j *Job) {
			j.ID, j.BatchID, j.Index, j.RewardFn, j.Task.Name, j.Task.Path = "x", "y", 3, "kevin", "n", "/q"
		}, nil, true, true},
		{"completion text and share", func(j *Job) { s := "```python\ncode```"; j.Completion, j.Share = &s, true }, nil, true, true},
		{"task source", func(j *Job) { j.Task.Source = "src2" }, nil, false, false},
		{"code", func(j *Job) { j.Code = "code " }, nil, false, false},
		{"seeds", func(j *Job) { j.Options.Seeds++ }, nil, false, false},
		{"timing", func(j *Job) { j.Options.Timing = !j.Options.Timing }, nil, false, false},
		{"atol set", func(j *Job) { a := 1e-3; j.Options.Atol = &a }, nil, false, false},
		{"harness version", nil, func(e *Env) { e.HarnessVersion = "0.2.1" }, true, false},
		{"torch", nil, func(e *Env) { e.Torch = "2.11.1" }, true, false},
		{"triton", nil, func(e *Env) { e.Triton = "3.5.1" }, true, false},
		{"GPU model", nil, func(e *Env) { e.GPU = "NVIDIA A100-SXM4-80GB" }, true, false},
		{"CPU", nil, func(e *Env) { e.GPU = "" }, true, false},
		// Field boundaries are kept: moving text between fields is another env.
		{"fields run together", nil, func(e *Env) { e.Torch, e.Triton = "2.11.03", ".6.0" }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, e := base, h200
			if tt.job != nil {
				tt.job(&j)
			}
			if tt.env != nil {
				tt.env(&e)
			}
			work, cache := keys(t, j, e)
			if (work == wantWork) != tt.work || (cache == wantCache) != tt.cached {
				t.Errorf("same work key %v (want %v), same cache key %v (want %v)", work == wantWork, tt.work, cache == wantCache, tt.cached)
			}
		})
	}
	bad := base
	bad.Options.GPUMemoryFraction = math.NaN()
	if _, err := WorkKey(bad); err == nil {
		t.Error("WorkKey of NaN options succeeded")
	}
	if _, err := CacheKey(bad, h200); err == nil {
		t.Error("CacheKey of NaN options succeeded")
	}
}

// EnvOf reads what the key covers out of a verdict's env, and nothing else.
func TestEnvOf(t *testing.T) {
	v := eval.Verdict{Env: eval.Env{Device: "cuda:0", GPUName: "NVIDIA H200", GPUUUID: "GPU-1", Driver: "580",
		Python: "3.12", Torch: "2.11.0", Triton: "3.6.0", HarnessVersion: "0.2.0", Sandbox: "full"}}
	want := Env{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	if got := EnvOf(v); got != want {
		t.Errorf("EnvOf = %+v, want %+v", got, want)
	}
	other := v
	other.Env.GPUUUID, other.Env.Driver = "GPU-2", "581" // another H200 of the same model
	if EnvOf(other) != want {
		t.Error("another GPU of the same model is another environment")
	}
	// The child reports torch with its build tag, the zygote's hello without.
	built := v
	built.Env.Torch, built.Env.Triton = "2.11.0+cu130", "3.6.0+git1234"
	if got := EnvOf(built); got != want {
		t.Errorf("EnvOf(torch %s) = %+v, want %+v", built.Env.Torch, got, want)
	}
}

// fakePool is a harness with two H200s and a GPU whose zygote is down.
type fakePool struct {
	hello bool
	stats []harness.ZygoteStats
}

func (p fakePool) Hello() (harness.Hello, bool) {
	return harness.Hello{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0+local"}, p.hello
}
func (p fakePool) GPUs() gpu.Info {
	return gpu.Info{Devices: []gpu.Device{{Index: 0, Name: "NVIDIA H200"}, {Index: 1, Name: "NVIDIA H200"}, {Index: 2, Name: "NVIDIA A100"}}}
}
func (p fakePool) Stats() []harness.ZygoteStats { return p.stats }

func TestPoolEnvs(t *testing.T) {
	h200 := Env{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	cpu := h200
	cpu.GPU = ""
	up := func(labels ...string) []harness.ZygoteStats {
		var out []harness.ZygoteStats
		for _, l := range labels {
			out = append(out, harness.ZygoteStats{Label: l, Up: true})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		pool fakePool
		want []Env
	}{
		{"two GPUs of one model, one down", fakePool{true, append(up("gpu0", "gpu1"), harness.ZygoteStats{Label: "gpu2"})}, []Env{h200}},
		{"cpu", fakePool{true, up("cpu")}, []Env{cpu}},
		{"a GPU NVML does not list", fakePool{true, up("gpu7")}, nil},
		{"no zygote started", fakePool{false, up("gpu0")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := PoolEnvs(tt.pool); !slices.Equal(got, tt.want) {
				t.Errorf("PoolEnvs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCacheable(t *testing.T) {
	want := map[eval.Status]bool{
		eval.StatusCorrect: true, eval.StatusIncorrect: true, eval.StatusCompileError: true,
		eval.StatusRuntimeError: true, eval.StatusRewardHack: true, eval.StatusInvalidSubmission: true,
		eval.StatusTimeout: false, eval.StatusCompileTimeout: false, eval.StatusResourceLimit: false, eval.StatusHarnessError: false,
	}
	for _, s := range eval.Statuses {
		w, ok := want[s]
		if !ok {
			t.Errorf("status %s: decide whether it is cacheable and add it here", s)
		}
		if got := Cacheable(eval.Verdict{Status: s}); got != w {
			t.Errorf("Cacheable(%s) = %v, want %v", s, got, w)
		}
	}
	if Cacheable(eval.Verdict{Status: eval.StatusRuntimeError, TaskError: "reference raised"}) {
		t.Error("a verdict whose reference failed is cacheable")
	}
}
