package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// orderEvaluator records the code of each evaluation in the order they run,
// one at a time, each taking a little while.
type orderEvaluator struct {
	mu    sync.Mutex
	order []string
}

func (o *orderEvaluator) Evaluate(_ context.Context, j eval.Job) (eval.Verdict, error) {
	time.Sleep(5 * time.Millisecond)
	o.mu.Lock()
	o.order = append(o.order, j.Code)
	o.mu.Unlock()
	return dispatch.Verdict(eval.TimingCPUInterpreter, dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}, eval.StatusCorrect, "", ""), nil
}
func (o *orderEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 1}}
}
func (o *orderEvaluator) Mode() string { return eval.TimingCPUInterpreter }

func (o *orderEvaluator) snapshot() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.order...)
}

func orderService(b *bus.Bus) *dispatch.Service {
	return &dispatch.Service{Bus: b, Mode: func() string { return eval.TimingCPUInterpreter }, Poll: 200 * time.Millisecond, Log: testLogger()}
}

// orderBatch is n items of client's whose codes are "<prefix> <i>", as orderEvaluator records them.
func orderBatch(id, client, prefix string, n int) dispatch.Batch {
	items := make([]dispatch.Item, n)
	for i := range items {
		items[i] = dispatch.Item{Code: fmt.Sprintf("%s %d", prefix, i)}
	}
	return dispatch.Batch{ID: id, Task: eval.Task{Name: "t", Source: "src"}, TaskHash: eval.HashSource("src"), Items: items,
		Options: eval.DefaultOptions(), Share: false, ClientID: client}
}

// Two API keys share the slots: the key that queued 40 jobs first does not
// keep the other's 4 waiting behind all of them (fair share, dispatch/lanes.go).
func TestAKeysFewJobsDoNotWaitBehindAnothersMany(t *testing.T) {
	ev := &orderEvaluator{}
	svc := orderService(startRun(t, ev))
	if err := svc.Submit(t.Context(), orderBatch("b_ALICE", "alice", "alice", 40)); err != nil {
		t.Fatal(err)
	}
	f, err := svc.Follow(t.Context(), "b_BOB", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := len(ev.snapshot())
	if err := svc.Submit(t.Context(), orderBatch("b_BOB", "bob", "bob", 4)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for range 4 {
		if _, err := f.Next(ctx); err != nil {
			t.Fatalf("bob's results: %v (ran %v)", err, ev.snapshot())
		}
	}
	// Taking turns, alice runs about one job per one of bob's: 4, plus
	// those in flight when bob came. First come first served: 40 - before.
	after := 0
	for _, code := range ev.snapshot()[before:] {
		if strings.HasPrefix(code, "alice") {
			after++
		}
	}
	t.Logf("%d of alice's jobs ran while bob's 4 waited (%d before)", after, before)
	if after > 8 {
		t.Fatalf("%d of alice's jobs ran after bob's batch came and before it finished; want turns (≤ 8)", after)
	}
}

// GRPO groups sent at once by one key run a group at a time: each batch's
// jobs are queued together, so a group's last items go ahead of the next
// group's first and its makespan is its own work, not every group's.
func TestOneKeysBatchesSentAtOnceRunAGroupAtATime(t *testing.T) {
	ev := &orderEvaluator{}
	svc := orderService(startRun(t, ev))
	const groups, n = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, groups)
	for g := range groups {
		batch := orderBatch(fmt.Sprintf("b_G%d", g), "trainer", fmt.Sprintf("g%d", g), n)
		wg.Go(func() { errs <- svc.Submit(t.Context(), batch) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(ev.snapshot()) < groups*n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	order := ev.snapshot()
	if len(order) != groups*n {
		t.Fatalf("%d of %d jobs ran", len(order), groups*n)
	}
	switches := 0
	for i := 1; i < len(order); i++ {
		if strings.Fields(order[i])[0] != strings.Fields(order[i-1])[0] {
			switches++
		}
	}
	if switches != groups-1 {
		t.Fatalf("the groups' jobs ran interleaved (%d switches, want %d): %v", switches, groups-1, order)
	}
}
