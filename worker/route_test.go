package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

var (
	h200 = Env{Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H200"}
	h100 = Env{Torch: "2.11.0", Triton: "3.6.0", GPU: "NVIDIA H100 80GB HBM3"}
)

func requiring(r eval.Requires) eval.Options {
	o := eval.DefaultOptions()
	o.Requires = &r
	return o
}

func TestJobSubjectsNameTheirRequirement(t *testing.T) {
	for _, tt := range []struct {
		r    *eval.Requires
		want string
	}{
		{nil, "jobs.eval.gpu"},
		{&eval.Requires{}, "jobs.eval.gpu"},
		{&eval.Requires{GPU: "NVIDIA H200"}, "jobs.eval.gpu.nvidia-h200._._"},
		{&eval.Requires{GPU: "nvidia-h200", Torch: "2.11.0+cu130"}, "jobs.eval.gpu.nvidia-h200.2-11-0._"},
		{&eval.Requires{Triton: "3.6.0"}, "jobs.eval.gpu._._.3-6-0"},
	} {
		o := eval.DefaultOptions()
		o.Requires = tt.r
		if got := JobSubject(eval.TimingGPU, o, false); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.r, got, tt.want)
		}
	}
	if got := JobSubject(eval.TimingGPU, requiring(eval.Requires{GPU: "H200"}), true); got != "jobs.interactive.gpu.h200._._" {
		t.Errorf("interactive: %s", got)
	}
}

// Every requirement an environment meets is a subject its worker pulls, and
// only those: a job requiring another GPU or toolchain is never delivered.
func TestQueuesAreWhatTheEnvironmentsSatisfy(t *testing.T) {
	filters := func(envs ...Env) []string {
		var out []string
		for _, q := range Queues(eval.TimingGPU, envs) {
			out = append(out, q.Filter)
		}
		return out
	}
	h200Only := filters(h200)
	if len(h200Only) != 16 || h200Only[0] != "jobs.interactive.gpu" || h200Only[8] != "jobs.eval.gpu" {
		t.Fatalf("queues %v", h200Only)
	}
	reqs := []eval.Requires{
		{GPU: "NVIDIA H200"}, {Torch: "2.11.0"}, {Triton: "3.6.0"}, {GPU: "nvidia h200", Torch: "2.11.0"},
		{GPU: "NVIDIA H200", Triton: "3.6.0+git"}, {Torch: "2.11.0", Triton: "3.6.0"},
		{GPU: "NVIDIA H200", Torch: "2.11.0", Triton: "3.6.0"},
	}
	for _, r := range reqs {
		for _, interactive := range []bool{true, false} {
			if s := JobSubject(eval.TimingGPU, requiring(r), interactive); !slices.Contains(h200Only, s) {
				t.Errorf("an H200 worker does not pull %s (%+v)", s, r)
			}
		}
		if !Satisfies([]Env{h200}, &r) {
			t.Errorf("%+v not satisfied by %+v", r, h200)
		}
	}
	for _, r := range []eval.Requires{{GPU: "NVIDIA H100 80GB HBM3"}, {Torch: "2.10.0"}, {GPU: "NVIDIA H200", Triton: "3.5.0"}} {
		if s := JobSubject(eval.TimingGPU, requiring(r), false); slices.Contains(h200Only, s) {
			t.Errorf("an H200 worker pulls %s (%+v)", s, r)
		}
		if Satisfies([]Env{h200}, &r) {
			t.Errorf("%+v satisfied by %+v", r, h200)
		}
	}
	both := filters(h200, h100)
	if len(both) != 2*(8+4) { // the H100's own GPU subsets; the toolchain ones are shared
		t.Fatalf("%d queues for two GPU models: %v", len(both), both)
	}
	if cpu := filters(Env{Torch: "2.11.0", Triton: "3.6.0"}); len(cpu) != 8 {
		t.Fatalf("a CPU worker (no GPU model) pulls %v", cpu)
	}
	seen := map[string]bool{}
	for _, q := range Queues(eval.TimingGPU, []Env{h200, h100}) {
		if seen[q.Durable] {
			t.Fatalf("durable %s twice", q.Durable)
		}
		seen[q.Durable] = true
	}
}

// routedPool is a worker's pool with one zygote up on a GPU of one model;
// its verdicts say which model ran them.
type routedPool struct{ model string }

func (p routedPool) Hello() (harness.Hello, bool) {
	return harness.Hello{HarnessVersion: "0.2.0", Torch: "2.11.0", Triton: "3.6.0"}, true
}
func (p routedPool) GPUs() gpu.Info {
	return gpu.Info{Devices: []gpu.Device{{Index: 0, Name: p.model}}}
}
func (p routedPool) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "gpu0", Up: true, Concurrency: 1}}
}
func (p routedPool) Mode() string { return eval.TimingGPU }
func (p routedPool) Evaluate(_ context.Context, j eval.Job) (eval.Verdict, error) {
	return Verdict(eval.TimingGPU, Job{Task: j.Task, Code: j.Code}, eval.StatusCorrect, p.model, ""), nil
}

func TestWorkersTakeOnlyTheJobsTheyCanRun(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir(), NakDelay: 20 * time.Millisecond}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	for _, m := range []string{h200.GPU, h100.GPU} {
		go func() { done <- Run(ctx, b, routedPool{m}, testLogger()) }()
	}
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}()
	sub, err := b.Subscribe(t.Context(), ResultsSubject("b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	publish := func(i int, r eval.Requires) {
		job := Job{ID: fmt.Sprintf("b1-%05d", i), BatchID: "b1", Index: i, Task: eval.Task{Name: "t", Source: "src"},
			Code: fmt.Sprint("code ", i), Options: requiring(r), EnqueuedAt: time.Now()}
		data, _ := json.Marshal(job)
		if err := b.PublishJob(t.Context(), JobSubject(eval.TimingGPU, job.Options, false), job.ID, data); err != nil {
			t.Fatal(err)
		}
	}
	publish(0, eval.Requires{GPU: "NVIDIA A100"}) // nobody's: it waits
	for i := 1; i <= 6; i++ {
		model := []string{h200.GPU, h100.GPU}[i%2]
		publish(i, eval.Requires{GPU: model, Torch: "2.11.0"})
	}
	for range 6 {
		r := next(t, sub)
		want := []string{h200.GPU, h100.GPU}[r.Index%2]
		if r.Index == 0 || r.Verdict.Feedback != want {
			t.Fatalf("item %d ran on %q, want %q", r.Index, r.Verdict.Feedback, want)
		}
	}
	// The last job is acked just after its result is announced.
	waitFor(t, func() bool { d, err := b.QueueDepth(t.Context()); return err == nil && d == 1 })
	time.Sleep(300 * time.Millisecond)
	if d, err := b.QueueDepth(t.Context()); err != nil || d != 1 {
		t.Fatalf("queue depth %d (%v): the A100 job should wait, untaken", d, err)
	}
}
