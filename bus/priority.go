package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Queue names one durable consumer of JOBS and the subject it takes.
// Consecutive queues with the same non-empty Group take turns (a tier);
// every other queue is a tier of its own.
type Queue struct {
	Durable string
	Filter  string
	Group   string
}

// PrioritizedJobs is Jobs over several durable consumers sharing one set of
// slots. Tiers (Queue.Group) are in priority order: a free slot takes a job
// of the first tier that has one waiting, so interactive work (a search's
// evaluations) waits for a slot, never behind a bulk batch queued before
// it. Within a tier the queues take turns, one job each from a start that
// moves on every round: while several hold jobs, each gets an equal share
// of the slots (the lanes of API keys, dispatch/lanes.go). Delivery, acks,
// keepalives and redelivery are Jobs's.
//
// With no job waiting it does not poll: it sleeps until a wake-up says a
// job was queued on one of its subjects (wake.go), and then looks only in
// the queues that may hold one, so a job starts within milliseconds on a
// free slot. Idle, it asks the server once per queue every JobRecheck.
func (b *Bus) PrioritizedJobs(ctx context.Context, queues []Queue, concurrency int, handle func(ctx context.Context, d Delivery) error) error {
	if len(queues) == 0 {
		return fmt.Errorf("bus.PrioritizedJobs: no queue")
	}
	// Subscribed before the first round looks in the queues: a job queued
	// after that round is announced to this loop.
	w, err := b.listen(ctx, queues)
	if err != nil {
		return fmt.Errorf("bus.PrioritizedJobs: wake-ups: %w", err)
	}
	defer b.unlisten(w)
	cons := make([]jetstream.Consumer, len(queues))
	var tiers [][]int // indices into queues and cons
	for i, q := range queues {
		c, err := b.jobsConsumer(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		cons[i] = c
		if i == 0 || q.Group == "" || q.Group != queues[i-1].Group {
			tiers = append(tiers, nil)
		}
		tiers[len(tiers)-1] = append(tiers[len(tiers)-1], i)
	}
	concurrency = max(concurrency, 1)
	log := b.log.With("durable", queues[0].Durable)
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	run := func(m jetstream.Msg) {
		wg.Go(func() {
			defer func() { <-slots }()
			b.runJob(ctx, log, m, handle)
		})
	}
	turns := make([]int, len(tiers))
	round := func(n int) (got int, err error) {
		w.beginRound()
		for i, tier := range tiers {
			if got == n {
				break
			}
			k, next, terr := takeTurns(ctx, w, cons, tier, turns[i], n-got, run)
			turns[i] = next
			got += k
			if err == nil {
				err = terr // a queue that failed is skipped this round; the rest still serve
			}
		}
		return got, err
	}
	for {
		// Wait for one free slot, then take all free ones: fetch only as
		// many jobs as can start now, so none waits here past its AckWait.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		n := 1
	fill:
		for n < concurrency {
			select {
			case slots <- struct{}{}:
				n++
			default:
				break fill
			}
		}
		got, err := round(n)
		for got == 0 && err == nil && w.wait(ctx) {
			got, err = round(n)
		}
		for i := got; i < n; i++ {
			<-slots // the slots reserved for jobs that did not come
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && got == 0 {
			if b.isClosed() {
				return fmt.Errorf("bus.PrioritizedJobs: %w", errClosed)
			}
			log.Warn("fetch failed; retrying", "err", err)
			if !sleepCtx(ctx, b.opts.NakDelay) {
				return nil
			}
		}
	}
}

// takeTurns takes up to n jobs already waiting in tier's queues that w says
// may hold one, one from each in turn starting at start, until n or none
// has more; a single queue left with jobs gives the rest at once. next is
// the queue after the last that gave a job: the next round starts there,
// so a queue's turn does not depend on how many empty ones sit before it.
func takeTurns(ctx context.Context, w *waiter, cons []jetstream.Consumer, tier []int, start, n int, run func(jetstream.Msg)) (got, next int, err error) {
	active := make([]bool, len(tier))
	left := 0
	for j, q := range tier {
		if active[j] = w.due(q); active[j] {
			left++
		}
	}
	next = start
	for got < n && left > 0 {
		for j := range tier {
			k := (start + j) % len(tier)
			if got == n {
				break
			}
			if !active[k] {
				continue
			}
			want := 1
			if left == 1 {
				want = n - got
			}
			began := w.now()
			m, perr := pullNoWait(ctx, cons[tier[k]], want, run)
			got += m
			if m > 0 {
				next = (k + 1) % len(tier)
			}
			if perr != nil || m < want {
				if perr == nil {
					w.found(tier[k], began)
				}
				active[k] = false
				left--
				if err == nil {
					err = perr
				}
			}
		}
	}
	return got, next, err
}

// jobsConsumer creates (or updates) q's durable consumer of JOBS.
func (b *Bus) jobsConsumer(ctx context.Context, q Queue) (jetstream.Consumer, error) {
	var c jetstream.Consumer
	// Tried again while the cluster cannot answer: a worker that was still
	// making its consumers when a node died exited with "context deadline
	// exceeded" (CI, test_nats_cluster, 2026-12-04). Creating one twice is
	// harmless.
	err := b.retryFor(ctx, "bus.Jobs "+q.Durable, setupRetry, unsettled(ctx), func() (err error) {
		c, err = b.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
			Durable:   q.Durable,
			AckPolicy: jetstream.AckExplicitPolicy,
			AckWait:   b.opts.JobAckWait,
			// No server-side limit: a job the server stopped delivering would sit
			// in the queue unanswered, its batch running forever. MaxDeliver is
			// counted here instead (Delivery.Final).
			MaxDeliver:    -1,
			FilterSubject: q.Filter,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus.Jobs %s: consumer: %w", q.Durable, err)
	}
	return c, nil
}

// pullNoWait takes up to n messages already waiting, calling fn with each.
func pullNoWait(ctx context.Context, cons jetstream.Consumer, n int, fn func(jetstream.Msg)) (int, error) {
	if ctx.Err() != nil {
		return 0, nil
	}
	batch, err := cons.FetchNoWait(n)
	if err != nil {
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		got++
		fn(m)
	}
	if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, jetstream.ErrNoMessages) {
		return got, err
	}
	return got, nil
}
