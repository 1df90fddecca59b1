package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/reward"
)

// Evaluator is what a worker needs of the harness; *harness.Supervisor is one.
type Evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
	Stats() []harness.ZygoteStats
	Mode() string
}

// Slots is the number of evaluations ev runs at once: the sum of its zygotes'
// concurrency.
func Slots(ev Evaluator) int {
	n := 0
	for _, st := range ev.Stats() {
		n += st.Concurrency
	}
	return max(n, 1)
}

// Ready reports whether ev can evaluate now (at least one zygote is up).
func Ready(ev Evaluator) error {
	for _, st := range ev.Stats() {
		if st.Up {
			return nil
		}
	}
	return errors.New("worker: no zygote is up")
}

// Run pulls jobs until ctx is cancelled (then it returns nil), with as many
// in flight as ev has slots.
func Run(ctx context.Context, b *bus.Bus, ev Evaluator, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	slots, mode := Slots(ev), ev.Mode()
	h := &handler{bus: b, ev: ev, log: log.With("component", "worker"), now: time.Now, gang: newGang(slots)}
	var envs []dispatch.Env
	if p, ok := ev.(dispatch.Pool); ok {
		envs = dispatch.PoolEnvs(p) // its zygotes are up: serve and worker start them first
	}
	queues := dispatch.Queues(mode, envs)
	h.log.Info("pulling jobs", "subject", dispatch.Subject(mode), "interactive", dispatch.InteractiveSubject(mode),
		"queues", len(queues), "concurrency", slots)
	if err := b.PrioritizedJobs(ctx, queues, slots, h.handle); err != nil {
		return fmt.Errorf("worker.Run: %w", err)
	}
	return nil
}

// handler is the worker's end of the queue: it handles each delivery of a
// job (handle), from the evaluation to the answer.
type handler struct {
	bus    *bus.Bus
	ev     Evaluator
	log    *slog.Logger
	now    func() time.Time
	unsent unsent
	gang   *gang
}

// handle evaluates one job, unless it shares an identical job's evaluation,
// and then answers the jobs that share its own. An error hands the job back
// for redelivery; on the last delivery a failed evaluation becomes a
// harness_error verdict, so the waiting client and the log (and the jobs
// sharing it) still hear of it.
func (h *handler) handle(ctx context.Context, d bus.Delivery) error {
	var job dispatch.Job
	if err := json.Unmarshal(d.Data, &job); err != nil || job.ID == "" || job.BatchID == "" {
		// Redelivery cannot fix a malformed job, and there is no batch to answer.
		h.log.Error("malformed job; dropping it", "job", d.ID, "err", err)
		return nil
	}
	log := h.log.With("job", job.ID, "batch", job.BatchID, "delivery", d.NumDelivered)
	h.gang.enter(job.BatchID)
	defer h.gang.leave(job.BatchID)
	wk, owns := h.claim(ctx, log, job, d.Queued)
	if !owns {
		return nil // answered with, or waiting for, an identical evaluation's verdict
	}
	if r, ok := h.unsent.take(job.ID); ok {
		log.Debug("sending a result made before again")
		return h.send(ctx, log, job, wk, r)
	}
	evalCtx, ran := ctx, false
	if !job.Deadline.IsZero() {
		var cancel context.CancelFunc
		evalCtx, cancel = context.WithDeadline(ctx, job.Deadline)
		defer cancel()
	}
	if job.Lead {
		if held := h.gang.hold(evalCtx, job.BatchID); held > time.Millisecond {
			log.Debug("held the batch's lead job for a second free slot", "held_ms", ms(held))
		}
	}
	start := h.now()
	fn, ferr := reward.Lookup(job.RewardFn)
	var v eval.Verdict
	err := ferr
	if err == nil && evalCtx.Err() == nil {
		log.Debug("evaluating")
		v, err = h.ev.Evaluate(evalCtx, job.Job)
		ran = true
	}
	// Late: the deadline, not a shutdown, stopped it (or kept it from running);
	// a verdict that came in just before the deadline stands.
	late := ferr == nil && ctx.Err() == nil && evalCtx.Err() != nil && (!ran || err != nil)
	switch {
	case late:
		v, err = dispatch.DeadlineVerdict(h.ev.Mode(), job), nil
	case err == nil:
		h.cache(ctx, log, job, v)
	case ctx.Err() != nil || (!d.Final && ferr == nil):
		return fmt.Errorf("worker.handle %s: %w", job.ID, err)
	default:
		log.Error("evaluation failed on its last delivery; answering harness_error", "err", err)
		v = dispatch.HarnessError(h.ev.Mode(), job, err)
		if fn == nil {
			fn = func(eval.Verdict) reward.Result {
				return reward.Result{Note: "unknown reward function: exclude this sample"}
			}
		}
	}
	exec := h.now().Sub(start)
	v = dispatch.Hinted(job, v)
	res := fn(v)
	wait, run := ms(start.Sub(job.EnqueuedAt)), ms(exec)
	v.QueueWaitMS, v.ExecMS = &wait, &run // after caching: a cached answer ran nothing
	r := dispatch.Result{
		Index: job.Index, ID: job.ID, Reward: res.Reward, Valid: res.Valid, Note: res.Note, Verdict: v,
		QueueWaitMS: wait, ExecMS: run,
	}
	return h.send(ctx, log, job, wk, r)
}

// send logs, stores and announces r, then answers the jobs that share its
// evaluation. A result it could not store is kept for the job's redelivery.
func (h *handler) send(ctx context.Context, log *slog.Logger, job dispatch.Job, wk string, r dispatch.Result) error {
	if err := dispatch.PublishResult(ctx, h.bus, job, r); err != nil {
		h.unsent.put(job.ID, r)
		return fmt.Errorf("worker.handle %s: %w", job.ID, err)
	}
	if wk != "" {
		// A failure here hands the job back; its redelivery finds its result
		// stored and answers the waiters without running again.
		if err := dispatch.Drain(ctx, h.bus, wk, r); err != nil {
			return fmt.Errorf("worker.handle %s: %w", job.ID, err)
		}
	}
	log.Debug("done", "status", r.Verdict.Status, "reward", r.Reward, "exec_ms", r.ExecMS)
	return nil
}

// claim decides whether job runs or shares an identical job's evaluation
// (share.go); wk is its work key when it may share ("" when not). Sharing
// that fails costs an evaluation: the job runs, and still answers whoever
// waits for it.
func (h *handler) claim(ctx context.Context, log *slog.Logger, job dispatch.Job, queued time.Time) (wk string, run bool) {
	if !job.Share || job.TaskCheck {
		return "", true
	}
	wk, err := dispatch.ShareKey(job)
	if err != nil {
		return "", true
	}
	run, err = dispatch.Claim(ctx, h.bus, wk, job, queued)
	if err != nil && ctx.Err() == nil {
		log.Warn("sharing an identical evaluation failed; evaluating", "err", err)
	}
	return wk, run
}

// cache stores a deterministic verdict in the result cache, before the
// result is announced, so a client that repeats the request on hearing of it
// is answered from the cache. A failed store costs a rerun, not the job.
func (h *handler) cache(ctx context.Context, log *slog.Logger, job dispatch.Job, v eval.Verdict) {
	if err := dispatch.Remember(ctx, h.bus, job, v); err != nil {
		log.Warn("caching the verdict failed", "err", err)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
