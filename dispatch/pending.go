package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// An item can still get a result while its job is in JOBS (queued, or held
// by a worker: a job leaves the stream only once acked, after its result
// is stored), or while it waits under a work key (share.go) for an
// evaluation whose job is in JOBS. Anything else without a stored result
// never gets one: its job or its result was lost.

// pending is one look at what may still answer.
type pending struct {
	at   time.Time       // when the look began
	jobs map[string]bool // job ids in JOBS, and the ids waiting for one of them
}

func (p *pending) has(jobID string) bool { return p.jobs[jobID] }

// pendingLook shares one look among the callers that need one begun after
// a moment, so that readers of many stalled batches scan the queue once.
type pendingLook struct {
	mu   sync.Mutex
	last *pending
}

// pendingSince returns a look at the queue begun at or after t. A batch's
// record is stored after its jobs are queued, so a look begun after the
// record was read sees every job the batch still has.
func (s *Service) pendingSince(ctx context.Context, t time.Time) (*pending, error) {
	s.look.mu.Lock()
	defer s.look.mu.Unlock()
	if p := s.look.last; p != nil && !p.at.Before(t) {
		return p, nil
	}
	p, err := s.lookPending(ctx)
	if err != nil {
		return nil, err
	}
	s.look.last = p
	return p, nil
}

// lookPending reads JOBS, then the inflight bucket: a waiter answered
// between the two was answered before its owner's job left the queue, and
// its result is stored before anyone reads the results after this look.
func (s *Service) lookPending(ctx context.Context) (*pending, error) {
	p := &pending{at: time.Now(), jobs: map[string]bool{}}
	queued, err := s.Bus.QueuedJobs(ctx)
	if err != nil {
		return nil, &StoreError{"the queue", err}
	}
	keys := map[string]bool{} // share keys with a job in the queue
	for _, q := range queued {
		p.jobs[q.ID] = true
		var j Job
		if json.Unmarshal(q.Data, &j) != nil || !j.Share {
			continue
		}
		if k, err := ShareKey(j); err == nil {
			keys[k] = true
		}
	}
	waiters, err := s.Bus.Inflight().Values(ctx, ">")
	if err != nil {
		return nil, &StoreError{"the queue", err}
	}
	for key := range waiters {
		dot := strings.LastIndexByte(key, '.')
		if dot > 0 && keys[key[:dot]] {
			p.jobs[key[dot+1:]] = true
		}
	}
	return p, nil
}
