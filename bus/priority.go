package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Queue names one durable consumer of JOBS and the subject it takes.
type Queue struct {
	Durable string
	Filter  string
}

// priorityWait bounds a pull from the last queue while the earlier ones are
// empty: how long a job of an earlier queue may wait for a free slot to look
// for it.
const priorityWait = time.Second

// PrioritizedJobs is Jobs over several durable consumers sharing one set of
// slots, in priority order: a free slot takes a job of the first queue that
// has one waiting. Interactive work (a search's evaluations) so waits for a
// slot, never behind a bulk batch queued before it. Delivery, acks,
// keepalives and redelivery are Jobs's.
func (b *Bus) PrioritizedJobs(ctx context.Context, queues []Queue, concurrency int, handle func(ctx context.Context, j Job) error) error {
	if len(queues) == 0 {
		return fmt.Errorf("bus.PrioritizedJobs: no queue")
	}
	cons := make([]jetstream.Consumer, len(queues))
	for i, q := range queues {
		c, err := b.jobsConsumer(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		cons[i] = c
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
	last := pullWait
	if len(cons) > 1 {
		last = priorityWait
	}
	for {
		// Wait for one free slot, then take all free ones: pull only as
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
		got, err := 0, error(nil)
		for i, c := range cons {
			if got == n || err != nil {
				break
			}
			var k int
			if i < len(cons)-1 {
				k, err = pullNoWait(ctx, c, n-got, run)
			} else {
				k, err = pull(ctx, c, n-got, last, run)
			}
			got += k
		}
		for i := got; i < n; i++ {
			<-slots // the slots reserved for jobs that did not come
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
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

// jobsConsumer creates (or updates) q's durable consumer of JOBS.
func (b *Bus) jobsConsumer(ctx context.Context, q Queue) (jetstream.Consumer, error) {
	c, err := b.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable:   q.Durable,
		AckPolicy: jetstream.AckExplicitPolicy,
		AckWait:   b.opts.JobAckWait,
		// No server-side limit: a job the server stopped delivering would sit
		// in the queue unanswered, its batch running forever. MaxDeliver is
		// counted here instead (Job.Final).
		MaxDeliver:    -1,
		FilterSubject: q.Filter,
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
