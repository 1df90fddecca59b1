package harness

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Evaluations running at once never hold more host memory together than
// Config.HostMemoryMB, however many slots are free; one that asks for more
// than the whole runs held to the whole. Without the bound the same jobs
// overlap, so the test can tell.
func TestHostMemoryAdmission(t *testing.T) {
	for _, tt := range []struct {
		name     string
		budget   int
		asks     []int
		wantPeak int // the most host memory held at once
		wantRuns int // the most evaluations running at once
	}{
		{"two of 2000 do not fit 3000: one at a time", 3000, []int{2000, 2000, 2000}, 2000, 1},
		{"three of 1000 fit 3000", 3000, []int{1000, 1000, 1000}, 3000, 3},
		{"one asking 5000 is held to 3000, alone", 3000, []int{5000, 1000}, 3000, 1},
		{"no bound: all at once", -1, []int{2000, 2000, 2000}, 6000, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := startFake(t, "ok", Config{Device: "cpu", Concurrency: 4, HostMemoryMB: tt.budget}, nil)
			if err != nil {
				t.Fatal(err)
			}
			peak, runs := watchHeld(t, s)
			var wg sync.WaitGroup
			for _, mb := range tt.asks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					job := testJob(markSlow)
					job.Options = eval.DefaultOptions()
					job.Options.MemoryLimitMB = mb
					if v, err := s.Evaluate(context.Background(), job); err != nil || v.Status != eval.StatusCorrect {
						t.Errorf("%d MiB: %v %q", mb, err, v.Status)
					}
				}()
			}
			wg.Wait()
			if p, r := peak(), runs(); p != tt.wantPeak || r != tt.wantRuns {
				t.Errorf("held at most %d MiB by %d evaluations at once, want %d MiB by %d", p, r, tt.wantPeak, tt.wantRuns)
			}
		})
	}
}

// watchHeld samples the memory held and the evaluations running until the
// test ends, and returns their maxima so far.
func watchHeld(t *testing.T, s *Supervisor) (peak, runs func() int) {
	var mu sync.Mutex
	maxMB, maxRuns := 0, 0
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			s.mu.Lock()
			mb, n := s.memMB, 0
			for _, sl := range s.slots {
				n += sl.inflight
			}
			s.mu.Unlock()
			mu.Lock()
			maxMB, maxRuns = max(maxMB, mb), max(maxRuns, n)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	get := func(p *int) func() int {
		return func() int { mu.Lock(); defer mu.Unlock(); return *p }
	}
	return get(&maxMB), get(&maxRuns)
}
