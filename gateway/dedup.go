package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/worker"
)

// Identical items are evaluated once. Items of one batch with the same work
// key (worker.WorkKey: task source, the code extracted from the completion,
// options) form a group: the group is answered from the result cache, or
// joins an identical evaluation already in flight (queued by any gateway),
// or queues one job, its first item, whose evaluation answers the rest.
// worker/share.go holds the protocol; the worker that runs the job answers
// the items that wait for it, so a client that leaves, or a gateway that
// dies, leaves no item unanswered. A request with cache false shares
// nothing: each item runs.

// group is items of one batch that ask for the same work.
type group struct {
	key  string       // the work key; "" when the items share nothing
	jobs []worker.Job // in request order; jobs[0] is the one queued

	// What queueGroup did, for a batch refused later (rollback.go).
	seq    uint64 // where JOBS stored jobs[0]; 0: not queued
	joined bool   // every job waits for an identical evaluation in flight
}

// groupIdentical groups jobs by work key, in order of first appearance;
// with share false each job is its own group.
func groupIdentical(jobs []worker.Job, share bool) []*group {
	var out []*group
	byKey := map[string]*group{}
	for _, j := range jobs {
		key, err := worker.ShareKey(j)
		if !share || err != nil {
			out = append(out, &group{jobs: []worker.Job{j}})
			continue
		}
		g := byKey[key]
		if g == nil {
			g = &group{key: key}
			byKey[key] = g
			out = append(out, g)
		}
		g.jobs = append(g.jobs, j)
	}
	return out
}

// queueGroup answers g from the cache, joins it to an identical evaluation
// in flight, or queues its first job for all of it. queued is how many of
// the batch's items were handled before g, for the queue_full message.
func (s *Server) queueGroup(ctx context.Context, log *slog.Logger, g *group, queued, total int) *apiError {
	b := s.deps.Bus
	if g.key != "" {
		if v, source, ok := s.fromCache(ctx, g.jobs[0]); ok {
			for _, j := range g.jobs {
				if err := worker.PublishResult(ctx, b, j, cachedResult(j, v, source)); err != nil {
					log.Error("publishing a cached verdict failed", "err", err)
					return storeError(err, "the queue")
				}
			}
			return nil
		}
		joined, err := worker.Join(ctx, b, g.key, g.jobs)
		if err != nil {
			log.Warn("joining an identical evaluation in flight failed; queueing", "err", err)
		}
		if joined {
			g.joined = true
			return nil
		}
		// Registered before the job is queued, so its evaluation cannot
		// finish without them.
		if err := worker.Wait(ctx, b, g.key, g.jobs[1:]); err != nil {
			log.Error("registering identical items failed", "err", err)
			return storeError(err, "the queue")
		}
	}
	job := g.jobs[0]
	job.Share = g.key != ""
	data, err := json.Marshal(job)
	if err == nil {
		g.seq, err = b.QueueJob(ctx, worker.JobSubject(s.deps.TimingMode(), job.Options, false), job.ID, data)
	}
	if err == nil {
		return nil
	}
	if g.key != "" {
		if uerr := worker.Unwait(ctx, b, g.key, g.jobs[1:]); uerr != nil {
			log.Warn("removing identical items of a refused batch failed", "err", uerr)
		}
	}
	if errors.Is(err, bus.ErrQueueFull) {
		// accept takes back the jobs queued before this one (rollback.go).
		return newError(CodeQueueFull, "", "the evaluation queue is full (%d of %d items queued); retry after %d s", queued, total, RetryAfter)
	}
	log.Error("publish failed", "err", err)
	return storeError(err, "the queue")
}
