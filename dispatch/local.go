package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// Harness evaluates jobs in this process; *harness.Supervisor is one.
type Harness interface {
	Pool
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
	Mode() string
}

// Local evaluates on a harness in this process through the result cache
// in Bus: the evaluator of `kernelgate search` and `adapt`, which run no
// worker and no queue. Like Submit it reads the cache first, so a kernel
// already judged in this data directory (by a search or a reward request,
// under the harness's environment) is not run again; like a worker it
// files each deterministic verdict it makes.
type Local struct {
	Bus     *bus.Bus
	Harness Harness
	Log     *slog.Logger
}

// Evaluate is the harness's Evaluate, cache aside: the search's plain
// evaluator interface.
func (l *Local) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	return l.Harness.Evaluate(ctx, job)
}

// EvaluateCached is Service.EvaluateCached on the local harness.
func (l *Local) EvaluateCached(ctx context.Context, evalID string, hj eval.Job) (eval.Verdict, string, error) {
	log := l.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	job := Job{ID: evalID, Job: hj, EnqueuedAt: time.Now().UTC(), Unlogged: true, LogID: evalID}
	job.Hash()
	if v, source, ok := lookup(ctx, l.Bus, l.Harness.Mode(), PoolEnvs(l.Harness), job, log); ok && source != "" {
		return cachedResult(job, v, source).Verdict, source, nil
	}
	v, err := l.Harness.Evaluate(ctx, job.Job)
	if err != nil {
		return v, "", err
	}
	if err := Remember(ctx, l.Bus, job, v); err != nil {
		log.Warn("caching the verdict failed", "eval_id", evalID, "err", err)
	}
	return v, "", nil
}
