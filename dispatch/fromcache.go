package dispatch

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// fromCache returns the verdict the result cache holds for job's work, made
// in an environment of the workers that would run job now (Service.Envs), or
// ok false. Workers file each verdict under the environment it records, so
// one made under another harness, torch, triton or GPU model is never
// served. A cache that fails costs an evaluation, never the request.
func (s *Service) fromCache(ctx context.Context, job Job) (eval.Verdict, string, bool) {
	return lookup(ctx, s.Bus, s.mode(), s.envs(), job, s.log())
}

// lookup is fromCache over the cache in b, for workers of mode ("": any)
// in envs.
func lookup(ctx context.Context, b *bus.Bus, mode string, envs []Env, job Job, log *slog.Logger) (eval.Verdict, string, bool) {
	for _, env := range envs {
		key, err := CacheKey(job, env)
		if err != nil {
			return eval.Verdict{}, "", false
		}
		data, ok, err := b.CacheGet(ctx, key)
		if err != nil {
			log.Warn("result cache lookup failed; evaluating", "job", job.ID, "err", err)
			return eval.Verdict{}, "", false
		}
		if !ok {
			continue
		}
		v, source, err := CacheEntry(data)
		if err != nil {
			log.Warn("malformed cache entry; evaluating", "job", job.ID, "err", err)
			continue
		}
		// The key says all of this; the entry is checked against it anyway,
		// as what it claims to be is what a client is told.
		if Cacheable(v) && EnvOf(v) == env && (mode == "" || v.TimingMode == mode) {
			return v, source, true
		}
	}
	return eval.Verdict{}, "", false
}

// cachedResult is v from the cache as job's answer; source is the
// evaluation that made it.
func cachedResult(job Job, v eval.Verdict, source string) Result {
	v.TaskName = job.Task.Name // the key holds the task's source, not its name
	v.QueueWaitMS, v.ExecMS = nil, nil
	r := Scored(job, v)
	r.Cached, r.Source = true, source
	return r
}

// Remember files v, the verdict of job's evaluation, in the result cache
// in b when it is deterministic (Cacheable), under the environment it
// records and the eval_id the job is logged under (Job.LoggedAs). Workers
// call it after each evaluation, and so does Local.
func Remember(ctx context.Context, b *bus.Bus, job Job, v eval.Verdict) error {
	if job.TaskCheck || !Cacheable(v) { // a task check has no code: its verdict is no answer to one
		return nil
	}
	key, err := CacheKey(job, EnvOf(v))
	if err != nil {
		return fmt.Errorf("dispatch.Remember: %w", err)
	}
	data, err := CacheValue(v, job.LoggedAs())
	if err != nil {
		return fmt.Errorf("dispatch.Remember: %w", err)
	}
	if err := b.CachePut(ctx, key, data); err != nil {
		return fmt.Errorf("dispatch.Remember: %w", err)
	}
	return nil
}
