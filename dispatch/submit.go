package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
)

// Identical items are evaluated once. Items of one batch with the same work
// key (WorkKey: task source, the code extracted from the completion,
// options) form a group: the group is answered from the result cache, or
// joins an identical evaluation already in flight (queued by any gateway),
// or queues one job, its first item, whose evaluation answers the rest.
// share.go holds the protocol; the worker that runs the job answers the
// items that wait for it, so a client that leaves, or a gateway that dies,
// leaves no item unanswered. A batch with Share false shares nothing: each
// item runs.

// group is items of one batch that ask for the same work.
type group struct {
	key  string // the work key; "" when the items share nothing
	jobs []Job  // in request order; jobs[0] is the one queued

	// What queueGroup did, for a batch refused later (rollback.go).
	seq    uint64 // where JOBS stored jobs[0]; 0: not queued
	joined bool   // every job waits for an identical evaluation in flight
}

// Submit queues b's work and then stores b.Record, which makes the batch
// visible; its results then come through Follow. Items without code are
// queued too, with empty code: a task's reference may be broken, which is no
// fault of the completion's, and only a worker knows (the harness answers
// empty code without running anything once the reference is known to work;
// Hinted words the verdict). A batch is queued
// whole or refused (*QueueFullError, *StoreError): what was queued before
// the refusal is taken back (rollback.go). A caller that leaves meanwhile
// does not stop it halfway: the bus bounds each step. A batch without a
// TaskHash is an error: nothing of it is queued.
func (s *Service) Submit(ctx context.Context, b Batch) error {
	if b.TaskHash == "" {
		// Every caller builds the batch from a task hashed where it entered;
		// hashing here would hide a path that dropped the hash.
		return fmt.Errorf("dispatch.Submit %s: the batch carries no task hash (eval.HashSource of its task's source, made where the task entered)", b.ID)
	}
	ctx = context.WithoutCancel(ctx)
	log := s.log().With("batch", b.ID)
	now := time.Now().UTC()
	jobs := make([]Job, 0, len(b.Items))
	for i, item := range b.Items {
		job := Job{
			ID: EvalID(b.ID, i), BatchID: b.ID, Index: i,
			Job:    eval.Job{Task: b.Task, Code: item.Code, Options: b.Options, TaskHash: b.TaskHash},
			TaskID: b.TaskID, Completion: item.Completion, RewardFn: b.RewardFn,
			EnqueuedAt: now, RequestID: b.RequestID, ClientID: b.ClientID, Prompt: item.Prompt, Deadline: b.Deadline,
			FinishReason: item.FinishReason,
		}
		if item.Completion != nil {
			job.Code, _, _ = submission.Extract(*item.Completion)
		}
		job.Hash() // the code's, once, here (the task's is the batch's): the job carries both to its keys and its verdict
		jobs = append(jobs, job)
	}
	handled := 0
	groups := groupIdentical(jobs, b.Share)
	if len(groups) > 1 {
		groups[0].jobs[0].Lead = true
	}
	// One mode and one lane for the whole batch: its jobs go where one
	// kind of worker pulls them (the lane is looked up when a job is first
	// queued).
	dest := destination{mode: s.mode(), lane: -1, client: b.ClientID}
	unlock := s.queueInTurn(b.ClientID)
	for i, g := range groups {
		if err := s.queueGroup(ctx, log, g, handled, len(b.Items), &dest); err != nil {
			s.rollback(ctx, log, groups[:i])
			unlock()
			return err
		}
		handled += len(g.jobs)
	}
	unlock()
	if b.Record == nil {
		return nil
	}
	if err := s.Bus.PutBatch(ctx, b.ID, b.Record); err != nil {
		log.Error("storing the batch record failed", "err", err)
		s.rollback(ctx, log, groups)
		return &StoreError{"the result store", err}
	}
	return nil
}

// queueInTurn makes a key's batches queue their jobs one batch after
// another. A trainer sends a step's GRPO groups at once; queued item by
// item side by side, every group's jobs were interleaved in the queue, so
// each group finished near the end of the whole step (on an H200, 7 groups
// of 16: makespan 4× the slowest member). Queued whole, a group's last
// items go ahead of the next group's first. Only within one gateway:
// batches queued through two gateways may still interleave.
func (s *Service) queueInTurn(client string) (unlock func()) {
	mu, _ := s.queueing.LoadOrStore(client, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// groupIdentical groups jobs by work key, in order of first appearance;
// with share false each job is its own group.
func groupIdentical(jobs []Job, share bool) []*group {
	var out []*group
	byKey := map[string]*group{}
	for _, j := range jobs {
		key, err := ShareKey(j)
		if !share || err != nil {
			out = append(out, &group{jobs: []Job{j}})
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
// in flight, or queues its first job for all of it. handled is how many of
// the batch's items were handled before g, for the queue-full error.
// destination is where a batch's jobs are queued: the timing mode of the
// workers and the lane of the client's key.
type destination struct {
	mode   string
	lane   int // -1: not looked up yet
	client string
}

func (s *Service) queueGroup(ctx context.Context, log *slog.Logger, g *group, handled, total int, dest *destination) error {
	b := s.Bus
	if g.key != "" {
		if v, source, ok := s.fromCache(ctx, g.jobs[0]); ok {
			for _, j := range g.jobs {
				if err := PublishResult(ctx, b, j, cachedResult(j, v, source)); err != nil {
					log.Error("publishing a cached verdict failed", "err", err)
					return &StoreError{"the queue", err}
				}
			}
			return nil
		}
		joined, err := Join(ctx, b, g.key, g.jobs)
		if err != nil {
			log.Warn("joining an identical evaluation in flight failed; queueing", "err", err)
		}
		if joined {
			g.joined = true
			return nil
		}
		// Registered before the job is queued, so its evaluation cannot
		// finish without them.
		if err := Wait(ctx, b, g.key, g.jobs[1:]); err != nil {
			log.Error("registering identical items failed", "err", err)
			return &StoreError{"the queue", err}
		}
	}
	job := g.jobs[0]
	job.Share = g.key != ""
	if dest.lane < 0 {
		dest.lane = s.lane(ctx, dest.client)
	}
	data, err := json.Marshal(job)
	if err == nil {
		g.seq, err = b.QueueJob(ctx, JobSubject(dest.mode, job.Options, false, dest.lane), job.ID, data)
	}
	if err == nil {
		return nil
	}
	if g.key != "" {
		if uerr := Unwait(ctx, b, g.key, g.jobs[1:]); uerr != nil {
			log.Warn("removing identical items of a refused batch failed", "err", uerr)
		}
	}
	if !errors.Is(err, bus.ErrQueueFull) {
		log.Error("publish failed", "err", err)
	}
	return queueError(err, handled, total)
}

// queueError is a refused queueing as the service's error: the queue full
// after handled of total items, or the store failing.
func queueError(err error, handled, total int) error {
	if errors.Is(err, bus.ErrQueueFull) {
		return &QueueFullError{Handled: handled, Total: total}
	}
	return &StoreError{"the queue", err}
}
