package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Evaluate queues one job and waits for its verdict, on whichever worker
// takes it: this process's own or one on another host. It is the evaluator
// of serve's searches (rollout.Evaluator), so their evaluations count
// against --max-queued, run on remote workers behind a gateway with
// --workers 0, and go ahead of bulk batches (InteractiveSubject). The
// worker does not log them (Job.Unlogged): the search logs each under its
// step's eval_id, with the prompt. When ctx ends first the job is not taken
// back (a worker may be running it) but stops at ctx's deadline, if it has
// one.
func (s *Service) Evaluate(ctx context.Context, hj eval.Job) (eval.Verdict, error) {
	v, _, err := s.evaluate(ctx, "", hj, false)
	return v, err
}

// EvaluateCached is Evaluate through the result cache, for a caller that
// logs the evaluation itself under evalID (a search step): a verdict the
// cache holds for the job's work, made where the workers run, answers at
// once, with source the eval_id of the evaluation that made it; otherwise
// the job is queued as Evaluate queues it (source ""), and its worker files
// the verdict in the cache under evalID. An entry that names no evaluation
// (written before entries did) is not used: the caller logs source as the
// row that ran.
func (s *Service) EvaluateCached(ctx context.Context, evalID string, hj eval.Job) (v eval.Verdict, source string, err error) {
	return s.evaluate(ctx, evalID, hj, true)
}

func (s *Service) evaluate(ctx context.Context, evalID string, hj eval.Job, cached bool) (eval.Verdict, string, error) {
	if hj.Check != nil {
		// A worker of the version before jobs embedded eval.Job drops them
		// and would check at the defaults; no caller needs them.
		return eval.Verdict{}, "", errors.New("dispatch.Evaluate: a task check's options do not travel in a job")
	}
	batch := "q_" + rand.Text()
	job := Job{ID: EvalID(batch, 0), BatchID: batch, Job: hj, EnqueuedAt: time.Now().UTC(), Unlogged: true, LogID: evalID}
	job.Hash() // the ones hj carries, if it does
	if cached {
		if v, source, ok := s.fromCache(ctx, job); ok && source != "" {
			// Announced as a worker's result is, so that whoever counts
			// verdicts (the gateway's metrics) counts this one, as cached.
			r := cachedResult(job, v, source)
			if err := PublishResult(ctx, s.Bus, job, r); err != nil {
				s.log().Warn("announcing a cached verdict failed", "job", job.ID, "err", err)
			}
			return r.Verdict, source, nil
		}
	}
	if d, ok := ctx.Deadline(); ok {
		job.Deadline = d
	}
	r, err := s.one(ctx, job, true)
	if err != nil {
		return eval.Verdict{}, "", fmt.Errorf("dispatch.Evaluate: %w", err)
	}
	return r.Verdict, "", nil
}

// CheckTask queues a run of t's reference once in the sandbox (a task
// check, docs/protocol.md) and returns a follower its one result arrives on.
// Queueing is done before it returns, so a full queue or a broken one is
// its error; the wait is the caller's, which may outlive the request that
// asked.
//
// The check goes through the job queue like every evaluation: a gateway
// may run where no zygote does (`kernelgate worker` on the GPU hosts), a
// full queue refuses it too, and the reference is judged by the same
// workers, on the same devices, as the evaluations that will use it. A task
// check has no code to extract, no reward and no cache entry, and is not
// logged as an evaluation. taskHash is t.Source's, made where the task was
// built (tasks.New): the job carries it instead of hashing the source again.
func (s *Service) CheckTask(ctx context.Context, t eval.Task, taskHash string, opts eval.Options) (*Follower, error) {
	batch := "tc_" + rand.Text()
	opts.Timing = false
	job := Job{ID: EvalID(batch, 0), BatchID: batch, Job: eval.Job{Task: t, Options: opts, TaskCheck: true, TaskHash: taskHash}, EnqueuedAt: time.Now().UTC()}
	job.Hash() // the code's (empty: a check runs none)
	// The follower outlives the request: it is read in the background.
	return s.queueOne(context.WithoutCancel(ctx), job, false)
}

// one queues job and returns its result.
func (s *Service) one(ctx context.Context, job Job, interactive bool) (Result, error) {
	f, err := s.queueOne(ctx, job, interactive)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	return f.Next(ctx)
}

// queueOne follows job's batch of one and then queues job.
func (s *Service) queueOne(ctx context.Context, job Job, interactive bool) (*Follower, error) {
	data, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("encoding job %s: %w", job.ID, err)
	}
	f, err := s.Follow(ctx, job.BatchID, 1)
	if err != nil {
		return nil, err
	}
	if err := s.Bus.PublishJob(ctx, JobSubject(s.mode(), job.Options, interactive, 0), job.ID, data); err != nil {
		f.Close()
		return nil, queueError(err, 0, 1)
	}
	return f, nil
}
