package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

const (
	h200 = "NVIDIA H200"
	h100 = "NVIDIA H100 80GB HBM3"
)

func requiring(r eval.Requires) eval.Options {
	o := eval.DefaultOptions()
	o.Requires = &r
	return o
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
	return dispatch.Verdict(eval.TimingGPU, dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}, eval.StatusCorrect, p.model, ""), nil
}

func TestWorkersTakeOnlyTheJobsTheyCanRun(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir(), NakDelay: 20 * time.Millisecond}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	for _, m := range []string{h200, h100} {
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
	sub, err := b.Subscribe(t.Context(), dispatch.ResultsSubject("b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	publish := func(i int, r eval.Requires) {
		job := dispatch.Job{ID: fmt.Sprintf("b1-%05d", i), BatchID: "b1", Index: i, Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: fmt.Sprint("code ", i), Options: requiring(r)},
			EnqueuedAt: time.Now()}
		data, _ := json.Marshal(job)
		if err := b.PublishJob(t.Context(), dispatch.JobSubject(eval.TimingGPU, job.Options, false, 0), job.ID, data); err != nil {
			t.Fatal(err)
		}
	}
	publish(0, eval.Requires{GPU: "NVIDIA A100"}) // nobody's: it waits
	for i := 1; i <= 6; i++ {
		model := []string{h200, h100}[i%2]
		publish(i, eval.Requires{GPU: model, Torch: "2.11.0"})
	}
	for range 6 {
		r := next(t, sub)
		want := []string{h200, h100}[r.Index%2]
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
