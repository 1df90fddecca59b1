package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/reward"
)

// Identical work in flight is evaluated once. Jobs with one work key
// (WorkKey) share the evaluation of one of them, the owner, whichever
// gateway queued them and whichever worker runs them; the bus's inflight
// bucket holds who owns and who waits:
//
//   - <work key> names the owner. Only a worker writes it, for the job it
//     holds, so an owner is always a job in the queue: it runs (again after a
//     crash) until it has a result, and a gateway that dies leaves no owner
//     that never runs.
//   - <work key>.<job id> holds a waiting job. Once the owner's result is
//     stored, its worker answers every waiter (Drain) with that verdict,
//     rescored with the waiter's reward function and marked shared.
//   - A waiter registers and then reads the owner's result, answering
//     itself when it is there; the owner stores its result and then lists
//     the waiters. Either sees the other, so no waiter is left behind.
//   - A job queued after its owner finished waits for nothing: it asked
//     once the verdict was known, so it gets the result cache (at the
//     gateway) or, when the verdict was not cacheable (a timeout, a harness
//     error: outcomes of the moment), a run of its own. Both times are the
//     server's: when the stream stored the job, when the bucket stored the
//     owner's result.
//
// A job that waits shares the owner's verdict even when the cache would not
// keep it: it asked while that evaluation ran, so the verdict is as fresh
// as a run of its own, and running it again would double the cost of
// exactly the costliest kernels (a hang costs the whole timeout).

// owner is the value under a work key.
type owner struct {
	ID    string `json:"id"`
	Batch string `json:"batch"`
	Index int    `json:"index"`
}

func waiterKey(wk, jobID string) string { return wk + "." + jobID }

// Wait registers jobs as waiting for the next evaluation of work key wk to
// finish. A gateway registers the duplicates of a batch's item this way
// before it queues that item, whose evaluation then answers them.
func Wait(ctx context.Context, b *bus.Bus, wk string, jobs []Job) error {
	for _, j := range jobs {
		data, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("dispatch.Wait: %w", err)
		}
		if _, err := b.Inflight().Put(ctx, waiterKey(wk, j.ID), data); err != nil {
			return fmt.Errorf("dispatch.Wait: %w", err)
		}
	}
	return nil
}

// Unwait removes what Wait registered, for a batch refused after it.
func Unwait(ctx context.Context, b *bus.Bus, wk string, jobs []Job) error {
	for _, j := range jobs {
		if err := b.Inflight().Delete(ctx, waiterKey(wk, j.ID)); err != nil {
			return fmt.Errorf("dispatch.Unwait: %w", err)
		}
	}
	return nil
}

// Join registers jobs as waiters of wk's owner when that owner has not
// finished, and reports whether it did: if not, they need a job queued.
func Join(ctx context.Context, b *bus.Bus, wk string, jobs []Job) (bool, error) {
	data, _, ok, err := b.Inflight().Get(ctx, wk)
	if err != nil || !ok {
		return false, err
	}
	var o owner
	if json.Unmarshal(data, &o) != nil {
		return false, nil // the next worker to take the work replaces it
	}
	if _, _, done, err := ownerResult(ctx, b, o); err != nil || done {
		return false, err
	}
	if err := join(ctx, b, wk, o, jobs); err != nil {
		return false, err
	}
	return true, nil
}

// join registers jobs as waiters and answers them itself if o finished meanwhile.
func join(ctx context.Context, b *bus.Bus, wk string, o owner, jobs []Job) error {
	if err := Wait(ctx, b, wk, jobs); err != nil {
		return err
	}
	r, _, done, err := ownerResult(ctx, b, o)
	if err != nil || !done {
		return err
	}
	return Drain(ctx, b, wk, r)
}

// Claim (the worker's end) decides whether job, which the stream stored at queued, runs: it
// becomes wk's owner, or it waits for the owner's verdict or gets it now.
// On an error it runs: sharing that fails costs an evaluation, not the job.
func Claim(ctx context.Context, b *bus.Bus, wk string, job Job, queued time.Time) (bool, error) {
	me, err := json.Marshal(owner{ID: job.ID, Batch: job.BatchID, Index: job.Index})
	if err != nil {
		return true, fmt.Errorf("dispatch.claim: %w", err)
	}
	for range 8 { // each round lost a race with another writer of wk
		data, rev, ok, err := b.Inflight().Get(ctx, wk)
		if err != nil {
			return true, fmt.Errorf("dispatch.claim: %w", err)
		}
		if !ok {
			if _, err = b.Inflight().Create(ctx, wk, me); errors.Is(err, bus.ErrKeyExists) {
				continue
			}
			return true, err
		}
		var o owner
		if json.Unmarshal(data, &o) == nil {
			if run, decided, err := follow(ctx, b, wk, job, o, queued); decided || err != nil {
				return run, err
			}
		}
		// No owner in flight: this job is the next one.
		if _, err = b.Inflight().Update(ctx, wk, me, rev); errors.Is(err, bus.ErrRevision) {
			continue
		}
		return true, err
	}
	return true, fmt.Errorf("dispatch.claim %s: %s keeps changing", job.ID, wk)
}

// follow decides job's part under owner o: decided false means o finished
// before job was queued, so job takes its place.
func follow(ctx context.Context, b *bus.Bus, wk string, job Job, o owner, queued time.Time) (run, decided bool, err error) {
	r, at, done, err := ownerResult(ctx, b, o)
	switch {
	case err != nil:
		return true, true, err
	case o.ID == job.ID: // a redelivery of the owner: answer the waiters if it has its result
		if done {
			err := Drain(ctx, b, wk, r)
			return err != nil, true, err
		}
		return true, true, nil
	case !done:
		// o runs: job waits for it, unless a drain answered it already (a
		// redelivery of a waiter).
		_, _, answered, err := b.Result(ctx, job.BatchID, job.Index)
		if err == nil && !answered {
			err = join(ctx, b, wk, o, []Job{job})
		}
		return err != nil, true, err
	case queued.Before(at): // queued while o ran
		err := PublishResult(ctx, b, job, Shared(r, job))
		return err != nil, true, err
	}
	return false, false, nil
}

// Drain (the worker's end, once the owner's result is stored) answers every job waiting under wk with the owner's result r.
func Drain(ctx context.Context, b *bus.Bus, wk string, r Result) error {
	waiters, err := b.Inflight().Values(ctx, wk+".*")
	if err != nil {
		return fmt.Errorf("dispatch.drain: %w", err)
	}
	for key, data := range waiters {
		var w Job
		if err := json.Unmarshal(data, &w); err != nil || w.BatchID == "" {
			// Our own writes; a bad one has no batch to answer.
		} else if err := PublishResult(ctx, b, w, Shared(r, w)); err != nil {
			return fmt.Errorf("dispatch.drain: %w", err)
		}
		if err := b.Inflight().Delete(ctx, key); err != nil {
			return fmt.Errorf("dispatch.drain: %w", err)
		}
	}
	return nil
}

// ownerResult reads o's result and when it was stored; done false while o runs.
func ownerResult(ctx context.Context, b *bus.Bus, o owner) (Result, time.Time, bool, error) {
	data, at, ok, err := b.Result(ctx, o.Batch, o.Index)
	if err != nil || !ok {
		return Result{}, at, false, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, at, false, fmt.Errorf("dispatch: result of %s: %w", o.ID, err)
	}
	return r, at, true, nil
}

// Shared is the owner's result r as the answer to job, which ran nothing:
// rescored with job's reward function, under job's task name, without run
// times.
func Shared(r Result, job Job) Result {
	v := r.Verdict
	v.TaskName = job.Task.Name
	v.QueueWaitMS, v.ExecMS = nil, nil
	out := Scored(job, v)
	out.Shared, out.Source = true, r.ID
	if r.Source != "" { // the owner's own answer came from elsewhere
		out.Source = r.Source
	}
	return out
}

// Scored is job's result for a verdict it did not run for itself (shared,
// cached, or made without a run): scored with job's reward function, no
// queue wait or run time.
func Scored(job Job, v eval.Verdict) Result {
	v = Hinted(job, v)
	r := Result{Index: job.Index, ID: job.ID, Verdict: v}
	if f, err := reward.Lookup(job.RewardFn); err == nil {
		res := f(v)
		r.Reward, r.Valid, r.Note = res.Reward, res.Valid, res.Note
	}
	return r
}

// Hinted words a completion's verdict by what the completion around its code
// says (submission.Word): a cut-off completion that is not correct is
// invalid_submission, truncated; a compile error in code that was not fenced
// gets submission.TextHint; a completion with no code at all (sent to the
// harness as empty code, so that an inline reference is checked first) gets
// the extraction's reason. Per job, after caching: the cache answers code,
// which another request may have sent fenced and whole.
func Hinted(job Job, v eval.Verdict) eval.Verdict {
	if job.Completion == nil {
		return v
	}
	return submission.Word(*job.Completion, job.FinishReason, v)
}
