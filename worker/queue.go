package worker

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// Queue evaluates jobs through the bus's job queue, on whichever worker
// takes them: this process's own or one on another host. It is the
// evaluator of serve's searches (rollout.Evaluator), so their evaluations
// count against --max-queued, run on remote workers behind a gateway with
// --workers 0, and go ahead of bulk batches (InteractiveSubject). The
// worker does not log them (Job.Unlogged): the search logs each under its
// step's eval_id, with the prompt.
type Queue struct {
	Bus *bus.Bus
	// Mode is the timing mode jobs are queued for (the gateway's workers').
	Mode func() string
	// Poll: after this long without a notification the stored result is
	// read (notifications are core NATS and can be lost). 0: 2 s.
	Poll time.Duration
}

// Evaluate queues job and waits for its verdict. When ctx ends first the
// job is not taken back (a worker may be running it) but stops at ctx's
// deadline, if it has one.
func (q *Queue) Evaluate(ctx context.Context, hj eval.Job) (eval.Verdict, error) {
	if hj.Check != nil {
		return eval.Verdict{}, errors.New("worker.Queue: a task check's options do not travel in a job")
	}
	batch := "q_" + rand.Text()
	job := Job{
		ID: batch + "-00000", BatchID: batch, Task: hj.Task, Code: hj.Code, Options: hj.Options,
		TaskCheck: hj.TaskCheck, EnqueuedAt: time.Now().UTC(), Unlogged: true,
	}
	if d, ok := ctx.Deadline(); ok {
		job.Deadline = d
	}
	data, err := json.Marshal(job)
	if err != nil {
		return eval.Verdict{}, fmt.Errorf("worker.Queue: %w", err)
	}
	// Subscribe first: a result announced before we listen would be missed.
	sub, err := q.Bus.Subscribe(ctx, ResultsSubject(batch))
	if err != nil {
		return eval.Verdict{}, fmt.Errorf("worker.Queue: %w", err)
	}
	defer sub.Unsubscribe()
	if err := q.Bus.PublishJob(ctx, JobSubject(q.Mode(), job.Options, true), job.ID, data); err != nil {
		return eval.Verdict{}, fmt.Errorf("worker.Queue: %w", err)
	}
	poll := q.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, poll)
		data, err := sub.Next(pctx)
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return eval.Verdict{}, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			stored, _, ok, rerr := q.Bus.Result(ctx, batch, 0)
			if rerr != nil || !ok {
				continue // not in yet, or the store is busy: wait on
			}
			data = stored
		default:
			return eval.Verdict{}, fmt.Errorf("worker.Queue %s: %w", job.ID, err)
		}
		var r Result
		if err := json.Unmarshal(data, &r); err != nil {
			return eval.Verdict{}, fmt.Errorf("worker.Queue %s: decoding its result: %w", job.ID, err)
		}
		return r.Verdict, nil
	}
}
