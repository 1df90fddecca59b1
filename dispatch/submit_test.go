package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// Submit hashes each job's code once, when it builds it (the code extracted
// from a completion); the task's hash is the batch's, as the caller carried
// it. The queued jobs carry both to the worker.
func TestSubmitQueuesJobsWithTheirHashes(t *testing.T) {
	b := startBus(t, bus.Options{})
	s := &Service{Bus: b, Log: testLogger()}
	completion := "here it is:\n```python\nimport triton\n```\n"
	batch := Batch{ID: "b_h", Task: eval.Task{Name: "t", Source: "src"}, TaskHash: "sha256:the-batch-record's",
		Items: []Item{{Code: "plain code"}, {Completion: &completion}}, Options: eval.DefaultOptions()}
	if err := s.Submit(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[int]Job{}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- b.PrioritizedJobs(ctx, Queues("", nil), 2, func(_ context.Context, d bus.Delivery) error {
			var j Job
			if err := json.Unmarshal(d.Data, &j); err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if got[j.Index] = j; len(got) == len(batch.Items) {
				cancel()
			}
			return nil
		})
	}()
	<-done
	for i, want := range []string{"plain code", "import triton"} {
		j := got[i]
		if j.Code != want {
			t.Fatalf("job %d: code %q, want %q", i, j.Code, want)
		}
		if j.TaskHash != batch.TaskHash || j.CodeHash != eval.HashSource(want) {
			t.Errorf("job %d: hashes %q %q, want the batch's %q and %q", i, j.TaskHash, j.CodeHash, batch.TaskHash, eval.HashSource(want))
		}
	}
}

// A batch without its task's hash is refused, not hashed here: every caller
// carries the hash made where the task entered, and one that dropped it is a
// bug to see, not to paper over.
func TestSubmitRefusesABatchWithoutATaskHash(t *testing.T) {
	b := startBus(t, bus.Options{})
	s := &Service{Bus: b, Log: testLogger()}
	batch := Batch{ID: "b_nohash", Task: eval.Task{Name: "t", Source: "src"}, Items: []Item{{Code: "x"}}, Options: eval.DefaultOptions()}
	if err := s.Submit(t.Context(), batch); err == nil || !strings.Contains(err.Error(), "no task hash") {
		t.Fatalf("Submit without a task hash: %v", err)
	}
}
