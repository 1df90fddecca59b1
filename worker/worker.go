package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
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
	w := &runner{bus: b, ev: ev, log: log.With("component", "worker"), now: time.Now}
	slots, mode := Slots(ev), ev.Mode()
	var envs []Env
	if p, ok := ev.(Pool); ok {
		envs = PoolEnvs(p) // its zygotes are up: serve and worker start them first
	}
	queues := Queues(mode, envs)
	w.log.Info("pulling jobs", "subject", Subject(mode), "interactive", InteractiveSubject(mode),
		"queues", len(queues), "concurrency", slots)
	if err := b.PrioritizedJobs(ctx, queues, slots, w.handle); err != nil {
		return fmt.Errorf("worker.Run: %w", err)
	}
	return nil
}

type runner struct {
	bus    *bus.Bus
	ev     Evaluator
	log    *slog.Logger
	now    func() time.Time
	unsent unsent
}

// handle evaluates one job, unless it shares an identical job's evaluation,
// and then answers the jobs that share its own. An error hands the job back
// for redelivery; on the last delivery a failed evaluation becomes a
// harness_error verdict, so the waiting client and the log (and the jobs
// sharing it) still hear of it.
func (w *runner) handle(ctx context.Context, j bus.Job) error {
	var job Job
	if err := json.Unmarshal(j.Data, &job); err != nil || job.ID == "" || job.BatchID == "" {
		// Redelivery cannot fix a malformed job, and there is no batch to answer.
		w.log.Error("malformed job; dropping it", "job", j.ID, "err", err)
		return nil
	}
	log := w.log.With("job", job.ID, "batch", job.BatchID, "delivery", j.NumDelivered)
	wk, owns := w.claim(ctx, log, job, j.Queued)
	if !owns {
		return nil // answered with, or waiting for, an identical evaluation's verdict
	}
	if r, ok := w.unsent.take(job.ID); ok {
		log.Debug("sending a result made before again")
		return w.send(ctx, log, job, wk, r)
	}
	start := w.now()
	fn, ferr := reward.Lookup(job.RewardFn)
	var v eval.Verdict
	err := ferr
	evalCtx, ran := ctx, false
	if !job.Deadline.IsZero() {
		var cancel context.CancelFunc
		evalCtx, cancel = context.WithDeadline(ctx, job.Deadline)
		defer cancel()
	}
	if err == nil && evalCtx.Err() == nil {
		log.Debug("evaluating")
		v, err = w.ev.Evaluate(evalCtx, eval.Job{Task: job.Task, Code: job.Code, Options: job.Options, TaskCheck: job.TaskCheck})
		ran = true
	}
	// Late: the deadline, not a shutdown, stopped it (or kept it from running);
	// a verdict that came in just before the deadline stands.
	late := ferr == nil && ctx.Err() == nil && evalCtx.Err() != nil && (!ran || err != nil)
	switch {
	case late:
		v, err = DeadlineVerdict(w.ev.Mode(), job), nil
	case err == nil:
		w.cache(ctx, log, job, v)
	case ctx.Err() != nil || (!j.Final && ferr == nil):
		return fmt.Errorf("worker.handle %s: %w", job.ID, err)
	default:
		log.Error("evaluation failed on its last delivery; answering harness_error", "err", err)
		v = HarnessError(w.ev.Mode(), job, err)
		if fn == nil {
			fn = func(eval.Verdict) reward.Result {
				return reward.Result{Note: "unknown reward function: exclude this sample"}
			}
		}
	}
	exec := w.now().Sub(start)
	v = hinted(job, v)
	res := fn(v)
	wait, run := ms(start.Sub(job.EnqueuedAt)), ms(exec)
	v.QueueWaitMS, v.ExecMS = &wait, &run // after caching: a cached answer ran nothing
	r := Result{
		Index: job.Index, ID: job.ID, Reward: res.Reward, Valid: res.Valid, Note: res.Note, Verdict: v,
		QueueWaitMS: wait, ExecMS: run,
	}
	return w.send(ctx, log, job, wk, r)
}

// send logs, stores and announces r, then answers the jobs that share its
// evaluation. A result it could not store is kept for the job's redelivery.
func (w *runner) send(ctx context.Context, log *slog.Logger, job Job, wk string, r Result) error {
	if err := PublishResult(ctx, w.bus, job, r); err != nil {
		w.unsent.put(job.ID, r)
		return fmt.Errorf("worker.handle %s: %w", job.ID, err)
	}
	if wk != "" {
		// A failure here hands the job back; its redelivery finds its result
		// stored and answers the waiters without running again.
		if err := drain(ctx, w.bus, wk, r); err != nil {
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
func (w *runner) claim(ctx context.Context, log *slog.Logger, job Job, queued time.Time) (wk string, run bool) {
	if !job.Share || job.TaskCheck {
		return "", true
	}
	wk, err := ShareKey(job)
	if err != nil {
		return "", true
	}
	run, err = claim(ctx, w.bus, wk, job, queued)
	if err != nil && ctx.Err() == nil {
		log.Warn("sharing an identical evaluation failed; evaluating", "err", err)
	}
	return wk, run
}

// cache stores a deterministic verdict in the result cache, before the
// result is announced, so a client that repeats the request on hearing of it
// is answered from the cache. A failed store costs a rerun, not the job.
func (w *runner) cache(ctx context.Context, log *slog.Logger, job Job, v eval.Verdict) {
	if job.TaskCheck || !Cacheable(v) { // a task check has no code: its verdict is no answer to one
		return
	}
	key, err := CacheKey(job, EnvOf(v))
	if err == nil {
		var data []byte
		if data, err = CacheValue(v, job.ID); err == nil {
			err = w.bus.CachePut(ctx, key, data)
		}
	}
	if err != nil {
		log.Warn("caching the verdict failed", "err", err)
	}
}

// PublishResult logs r's verdict on events.evaluation (event id = job id),
// stores r in the batch's results and then announces it on the batch's
// results subject: whoever hears of a result can read it back. The gateway
// uses it too, for verdicts it makes itself (invalid_submission) and for
// answers from the cache. A task check is not logged: it evaluated no
// candidate, so it is no row of the evaluations table; nor is an Unlogged
// job, whose queuer logs it.
func PublishResult(ctx context.Context, b *bus.Bus, job Job, r Result) error {
	if !job.TaskCheck && !job.Unlogged {
		rew, wait, exec := r.Reward, r.QueueWaitMS, r.ExecMS
		ev := export.EvaluationEvent{
			EventID: job.ID, Time: time.Now().UTC(), EvalID: job.ID, BatchID: job.BatchID, TaskID: job.TaskID, TaskSource: job.Task.Source,
			RequestID: job.RequestID, ClientID: job.ClientID,
			Code: job.Code, Completion: job.Completion, Prompt: job.Prompt, RewardFn: rewardName(job.RewardFn),
			SourceEvalID: r.Source, Options: &job.Options,
			Reward: &rew, Cached: r.Cached, Verdict: r.Verdict,
		}
		if !r.Cached && !r.Shared { // a cached or shared answer waited in no queue and ran nothing
			ev.QueueWaitMS, ev.ExecMS = &wait, &exec
		}
		if err := export.Publish(ctx, b, ev); err != nil {
			return fmt.Errorf("worker.PublishResult: %w", err)
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("worker.PublishResult: %w", err)
	}
	// A redelivered job gets the first stored result back: announce that one.
	if data, err = b.PutResult(ctx, job.BatchID, job.Index, data); err != nil {
		return fmt.Errorf("worker.PublishResult: %w", err)
	}
	if err := b.Notify(ctx, ResultsSubject(job.BatchID), data); err != nil {
		return fmt.Errorf("worker.PublishResult: %w", err)
	}
	return nil
}

func rewardName(n string) string {
	if n == "" {
		return reward.Default
	}
	return n
}

// HarnessError is the verdict for a job the harness could not evaluate.
func HarnessError(mode string, job Job, err error) eval.Verdict {
	return Verdict(mode, job, eval.StatusHarnessError, err.Error(), "harness_error")
}

// Verdict is a verdict made outside the harness (no child ran), shaped like
// a child's: empty lists rather than null, the hashes filled.
func Verdict(mode string, job Job, status eval.Status, feedback, signature string) eval.Verdict {
	if mode == "" {
		mode = eval.TimingCPUInterpreter
	}
	return eval.Verdict{
		SchemaVersion: eval.SchemaVersion, Status: status, TimingMode: mode,
		HackFlags: []string{}, Warnings: []string{}, StageMS: map[string]float64{},
		Feedback: feedback, ErrorSignature: signature, TaskName: job.Task.Name,
		TaskHash: eval.HashSource(job.Task.Source), CodeHash: eval.HashSource(job.Code),
	}
}

// DeadlineVerdict answers an item its request's deadline_s left behind: not
// the candidate's doing (harness_error, valid false), never cached.
func DeadlineVerdict(mode string, job Job) eval.Verdict {
	v := Verdict(mode, job, eval.StatusHarnessError,
		"the request's deadline (deadline_s) passed before this item's evaluation finished; it was stopped: "+
			"not the candidate's doing, drop the sample", "")
	v.Retry = "deadline"
	return v
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
