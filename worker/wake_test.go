package worker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// An idle worker starts a job within milliseconds of its queueing, however
// long it has been idle: a trainer that sends one reward at a time and waits
// for it (OpenRLHF, a search's steps) pays no poll cycle per request. The
// worker is a GPU worker with an environment, so its last queue is a
// "requires" one and an ordinary reward (lane 0) is not the queue it would
// block on.
func TestAnIdleWorkerStartsEachJobWithinMilliseconds(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b, routedPool{h200}, testLogger()) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	svc := &dispatch.Service{Bus: b, Mode: func() string { return eval.TimingGPU }, Poll: time.Second, Log: testLogger()}
	one := func(i int) dispatch.Result {
		t.Helper()
		id := fmt.Sprintf("b_%d", i)
		f, err := svc.Follow(t.Context(), id, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		batch := dispatch.Batch{ID: id, Task: eval.Task{Name: "t", Source: "src"}, TaskHash: eval.HashSource("src"), Items: []dispatch.Item{{Code: fmt.Sprintf("code %d", i)}},
			Options: eval.DefaultOptions(), ClientID: "trainer"}
		if err := svc.Submit(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer rcancel()
		r, err := f.Next(rctx)
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
		return r
	}
	one(-1) // the worker's consumers exist
	var waits []float64
	for i := range 30 {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		waits = append(waits, one(i).QueueWaitMS)
	}
	p50, p99 := quantile(waits, 0.5), quantile(waits, 0.99)
	t.Logf("queue wait ms over %d jobs: p50 %.2f p99 %.2f", len(waits), p50, p99)
	if p99 > 20 {
		t.Fatalf("queue wait p99 %.1f ms (p50 %.1f), want at most 20 ms: %v", p99, p50, waits)
	}
}

// quantile is the nearest-rank p-quantile of xs (kgload's).
func quantile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(int(p*float64(len(s)-1)+0.5), len(s)-1)]
}
