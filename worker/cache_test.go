package worker

import (
	"math"
	"testing"

	"github.com/kernelgate/kernelgate/harness"
)

func TestCacheKey(t *testing.T) {
	base := Job{ID: "b1-00000", BatchID: "b1", Task: harness.Task{Name: "t", Path: "/p", Source: "src"},
		Code: "code", Options: harness.DefaultOptions(), RewardFn: "binary"}
	key := func(t *testing.T, j Job) string {
		t.Helper()
		k, err := CacheKey(j)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := key(t, base)
	if len(want) != 64 {
		t.Fatalf("key %q is not hex sha256", want)
	}
	tests := []struct {
		name   string
		change func(*Job)
		same   bool
	}{
		{"other ids, index, reward_fn, task name and path", func(j *Job) {
			j.ID, j.BatchID, j.Index, j.RewardFn, j.Task.Name, j.Task.Path = "x", "y", 3, "kevin", "n", "/q"
		}, true},
		{"completion text", func(j *Job) { s := "```python\ncode```"; j.Completion = &s }, true},
		{"task source", func(j *Job) { j.Task.Source = "src2" }, false},
		{"code", func(j *Job) { j.Code = "code " }, false},
		{"seeds", func(j *Job) { j.Options.Seeds++ }, false},
		{"timing", func(j *Job) { j.Options.Timing = !j.Options.Timing }, false},
		{"atol set", func(j *Job) { a := 1e-3; j.Options.Atol = &a }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := base
			tt.change(&j)
			if got := key(t, j); (got == want) != tt.same {
				t.Errorf("key %s vs %s: same %v, want %v", got, want, got == want, tt.same)
			}
		})
	}
	bad := base
	bad.Options.GPUMemoryFraction = math.NaN()
	if _, err := CacheKey(bad); err == nil {
		t.Error("CacheKey of NaN options succeeded")
	}
}

func TestCacheable(t *testing.T) {
	want := map[harness.Status]bool{
		harness.StatusCorrect: true, harness.StatusIncorrect: true, harness.StatusCompileError: true,
		harness.StatusRuntimeError: true, harness.StatusRewardHack: true, harness.StatusInvalidSubmission: true,
		harness.StatusTimeout: false, harness.StatusResourceLimit: false, harness.StatusHarnessError: false,
	}
	for _, s := range harness.Statuses {
		w, ok := want[s]
		if !ok {
			t.Errorf("status %s: decide whether it is cacheable and add it here", s)
		}
		if got := Cacheable(harness.Verdict{Status: s}); got != w {
			t.Errorf("Cacheable(%s) = %v, want %v", s, got, w)
		}
	}
	if Cacheable(harness.Verdict{Status: harness.StatusRuntimeError, TaskError: "reference raised"}) {
		t.Error("a verdict whose reference failed is cacheable")
	}
}
