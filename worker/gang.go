package worker

import (
	"context"
	"sync"
	"time"
)

// gangHold bounds how long a batch's lead job waits for a second free slot:
// the longest a slot stays idle for one group. On an H200 (7 groups of 16
// heavy evaluations, 16 slots) the second slot freed 2.9–4.8 s after the
// first (docs/measurements/2026-12-04-groups-start-together.md).
var gangHold = 10 * time.Second

// gang keeps a group's start together. A trainer's groups queued one after
// another start as slots free, and the first slot to free is often one
// whose evaluation ended in milliseconds (a compile error) while its
// neighbours run for seconds. A group whose first item took that slot ran
// alone until the next one freed: on an H200 its makespan after its first
// start was 1.51–1.77× its slowest member, where every other group stayed
// under 1.42. So a batch's lead job (dispatch.Job.Lead) that takes the last
// free slot, with no job of its batch running, waits until another slot
// frees (any job leaves) or another of its batch starts, at most gangHold,
// and then starts. Its wait counts as queue wait: it has not started.
type gang struct {
	slots int // the worker's; below 2 nothing is held

	mu       sync.Mutex
	inflight int            // jobs in handle, held ones too
	batches  map[string]int // of those, by batch
	leaves   uint64         // jobs that have left handle
	changed  chan struct{}  // closed and replaced when a job enters or leaves
}

func newGang(slots int) *gang {
	return &gang{slots: slots, batches: map[string]int{}, changed: make(chan struct{})}
}

// enter counts a job in; leave must follow.
func (g *gang) enter(batch string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight++
	g.batches[batch]++
	g.signal()
}

func (g *gang) leave(batch string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.batches[batch]--; g.batches[batch] <= 0 {
		delete(g.batches, batch)
	}
	g.leaves++
	g.signal()
}

func (g *gang) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// hold waits while the lead job of batch would run alone in the last free
// slot (see gang), and returns how long it waited.
func (g *gang) hold(ctx context.Context, batch string) time.Duration {
	if g.slots < 2 {
		return 0
	}
	start := time.Now()
	timer := time.NewTimer(gangHold)
	defer timer.Stop()
	g.mu.Lock()
	left := g.leaves
	g.mu.Unlock()
	for {
		g.mu.Lock()
		alone := g.inflight >= g.slots && g.batches[batch] <= 1 && g.leaves == left
		changed := g.changed
		g.mu.Unlock()
		if !alone {
			return time.Since(start)
		}
		select {
		case <-changed:
		case <-timer.C:
			return time.Since(start)
		case <-ctx.Done():
			return time.Since(start)
		}
	}
}
