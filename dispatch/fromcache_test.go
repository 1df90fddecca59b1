package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// fromCache answers only with a usable entry made in an environment of
// the service's workers.
func TestFromCache(t *testing.T) {
	b := startBus(t, bus.Options{})
	h200 := Env{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	a100 := h200
	a100.GPU = "NVIDIA A100-SXM4-80GB"
	newTorch := h200
	newTorch.Torch = "2.12.0"
	pool := []Env{h200}
	srv := &Service{Bus: b, Mode: func() string { return eval.TimingGPU }, Envs: func() []Env { return pool }, Log: testLogger()}
	job := Job{ID: "b_C-00000", BatchID: "b_C", Job: eval.Job{Task: eval.Task{Name: "mine", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
		RewardFn: "binary"}
	verdict := func(status eval.Status, mode string, env Env) []byte {
		v := Verdict(mode, Job{Job: eval.Job{Task: eval.Task{Name: "theirs", Source: "src"}, Code: "code"}}, status, "", "")
		v.Correct = status == eval.StatusCorrect
		v.Env = eval.Env{HarnessVersion: env.HarnessVersion, Torch: env.Torch, Triton: env.Triton, GPUName: env.GPU}
		data, _ := CacheValue(v, "b_src-00003")
		return data
	}
	plain := func() []byte { // an entry written before source_eval_id was kept
		var m map[string]any
		_ = json.Unmarshal(verdict(eval.StatusCorrect, eval.TimingGPU, h200), &m)
		delete(m, "source_eval_id")
		data, _ := json.Marshal(m)
		return data
	}
	for _, tt := range []struct {
		name  string
		pool  []Env
		under Env    // the key's environment
		entry []byte // nil: none
		hit   bool
	}{
		{"miss", []Env{h200}, h200, nil, false},
		{"hit", []Env{h200}, h200, verdict(eval.StatusCorrect, eval.TimingGPU, h200), true},
		{"made on another GPU model", []Env{h200}, a100, verdict(eval.StatusCorrect, eval.TimingGPU, a100), false},
		{"made under an older torch", []Env{newTorch}, h200, verdict(eval.StatusCorrect, eval.TimingGPU, h200), false},
		{"a mixed pool holds its model", []Env{h200, a100}, a100, verdict(eval.StatusCorrect, eval.TimingGPU, a100), true},
		{"no pool known", nil, h200, verdict(eval.StatusCorrect, eval.TimingGPU, h200), false},
		{"filed under another environment", []Env{h200}, h200, verdict(eval.StatusCorrect, eval.TimingGPU, a100), false},
		{"made on the CPU", []Env{h200}, h200, verdict(eval.StatusCorrect, eval.TimingCPUInterpreter, h200), false},
		{"not cacheable", []Env{h200}, h200, verdict(eval.StatusTimeout, eval.TimingGPU, h200), false},
		{"malformed", []Env{h200}, h200, []byte("{"), false},
		{"an entry from before source_eval_id", []Env{h200}, h200, plain(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool = tt.pool
			key, err := CacheKey(job, tt.under)
			if err != nil {
				t.Fatal(err)
			}
			if tt.entry != nil {
				if err := b.CachePut(t.Context(), key, tt.entry); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.CachePut(context.Background(), key, []byte("{")) })
			}
			v, source, ok := srv.fromCache(t.Context(), job)
			if ok != tt.hit {
				t.Fatalf("hit %v, want %v", ok, tt.hit)
			}
			wantSource := "b_src-00003"
			if strings.Contains(tt.name, "before source_eval_id") {
				wantSource = ""
			}
			if r := cachedResult(job, v, source); ok && (!r.Cached || r.Shared || r.Reward != 1 || r.Verdict.TaskName != "mine" || r.ID != job.ID || r.Source != wantSource) {
				t.Errorf("result %+v", r)
			}
		})
	}
}
