package dispatch

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// submitted queues a batch of n distinct items and returns what Settle
// needs of it, with when its record became readable.
func submitted(t *testing.T, s *Service, id string, n int) (Ended, time.Time) {
	t.Helper()
	items := make([]Item, n)
	for i := range items {
		items[i].Code = id + " kernel " + string(rune('a'+i))
	}
	b := Batch{ID: id, Task: eval.Task{Name: "t", Source: "src"}, TaskHash: eval.HashSource("src"), Items: items,
		Options: eval.DefaultOptions(), Share: true, RewardFn: "binary", Record: []byte(`{}`)}
	if err := s.Submit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return Ended{ID: id, Total: n, Created: time.Now(), TaskName: "t", TaskHash: b.TaskHash, RewardFn: "binary"}, time.Now()
}

// withdraw takes every queued job of batch out of JOBS, as store damage would.
func withdraw(t *testing.T, b *bus.Bus, batch string) {
	t.Helper()
	queued, err := b.QueuedJobs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range queued {
		if len(q.ID) > len(batch) && q.ID[:len(batch)+1] == batch+"-" {
			if err := b.WithdrawJob(t.Context(), q.Seq); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no queued job of %s to withdraw", batch)
	}
}

// A batch whose jobs only wait in the queue (no worker yet) is never
// settled, however long it has waited.
func TestSettleLeavesAQueuedBatchAlone(t *testing.T) {
	b := startBus(t, bus.Options{})
	s := &Service{Bus: b, Log: testLogger()}
	batch, read := submitted(t, s, "b_queued", 3)
	got, err := s.Settle(t.Context(), batch, read, nil)
	if err != nil || len(got.Lost)+len(got.Recovered) != 0 {
		t.Fatalf("settled %+v, %v; want nothing: every item is queued", got, err)
	}
	if stored, _ := s.Results(t.Context(), batch.ID, batch.Total); len(stored) != 0 {
		t.Fatalf("stored %d results for a queued batch", len(stored))
	}
}

// A batch whose jobs were lost ends: items in the log come back from it,
// the rest are lost (harness_error, retry lost, valid false); a follower
// gets every item and ends.
func TestSettleEndsABatchWhoseJobsWereLost(t *testing.T) {
	b := startBus(t, bus.Options{})
	s := &Service{Bus: b, Log: testLogger(), Poll: 50 * time.Millisecond}
	batch, read := submitted(t, s, "b_gone", 3)
	f, err := s.Follow(t.Context(), batch.ID, batch.Total)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	withdraw(t, b, batch.ID)
	logged := Result{Verdict: eval.Verdict{Status: eval.StatusCorrect, Correct: true, Compiled: true}, Reward: 1, Valid: true}
	fromLog := func(_ context.Context, e Ended) (map[int]Result, error) {
		if e.ID != batch.ID {
			t.Errorf("log read for %s", e.ID)
		}
		return map[int]Result{1: logged}, nil
	}
	got, err := s.Settle(t.Context(), batch, read, fromLog)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Lost, []int{0, 2}) || !slices.Equal(got.Recovered, []int{1}) {
		t.Fatalf("settled %+v; want lost [0 2], from the log [1]", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	seen := map[int]Result{}
	for {
		r, err := f.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("follower: %v (got %d items)", err, len(seen))
		}
		seen[r.Index] = r
	}
	for _, i := range []int{0, 2} {
		r := seen[i]
		if !r.Lost || r.Valid || r.Verdict.Status != eval.StatusHarnessError || r.Verdict.Retry != RetryLost || r.ID != EvalID(batch.ID, i) {
			t.Errorf("item %d: %+v; want lost, harness_error, retry lost, valid false", i, r)
		}
	}
	if r := seen[1]; !r.FromLog || r.Verdict.Status != eval.StatusCorrect || r.Reward != 1 || r.Lost {
		t.Errorf("item 1: %+v; want the logged verdict", r)
	}
	// Settled once: a second pass finds every item answered.
	if again, err := s.Settle(t.Context(), batch, time.Now(), fromLog); err != nil || len(again.Lost)+len(again.Recovered) != 0 {
		t.Errorf("second settle: %+v, %v", again, err)
	}
}

// Stalled counts from the batch's creation on first sight, from its last
// progress after, and re-arms after each check.
func TestStalled(t *testing.T) {
	s := &Service{Stall: time.Hour}
	if s.Stalled("a", 0, 2, time.Now()) {
		t.Error("a batch just made is stalled")
	}
	if !s.Stalled("b", 0, 2, time.Now().Add(-2*time.Hour)) {
		t.Error("a batch two hours old, seen first, is not stalled")
	}
	if s.Stalled("b", 0, 2, time.Now().Add(-2*time.Hour)) {
		t.Error("checked again at once")
	}
	if s.Stalled("c", 2, 2, time.Now().Add(-2*time.Hour)) {
		t.Error("a done batch is stalled")
	}
}

// A read whose caller's deadline passes returns within it as the store's
// timeout, whatever the bus's own bound.
func TestResultsAnswerWithinTheDeadline(t *testing.T) {
	b := startBus(t, bus.Options{})
	s := &Service{Bus: b, Log: testLogger()}
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	start := time.Now()
	_, err := s.Results(ctx, "b_any", 3)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("took %s past a spent deadline", took)
	}
	if err == nil {
		t.Fatal("no error past the deadline")
	}
}
