package gateway

import (
	"context"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/worker"
)

// fromCache returns the verdict the result cache holds for job's work, made
// in an environment of the workers that would run job now (Deps.Envs), or
// ok false. Workers file each verdict under the environment it records, so
// one made under another harness, torch, triton or GPU model is never
// served. A cache that fails costs an evaluation, never the request.
func (s *Server) fromCache(ctx context.Context, job worker.Job) (eval.Verdict, string, bool) {
	mode := s.deps.TimingMode()
	for _, env := range s.deps.Envs() {
		key, err := worker.CacheKey(job, env)
		if err != nil {
			return eval.Verdict{}, "", false
		}
		data, ok, err := s.deps.Bus.CacheGet(ctx, key)
		if err != nil {
			s.log.Warn("result cache lookup failed; evaluating", "job", job.ID, "err", err)
			return eval.Verdict{}, "", false
		}
		if !ok {
			continue
		}
		v, source, err := worker.CacheEntry(data)
		if err != nil {
			s.log.Warn("malformed cache entry; evaluating", "job", job.ID, "err", err)
			continue
		}
		// The key says all of this; the entry is checked against it anyway,
		// as what it claims to be is what a client is told.
		if worker.Cacheable(v) && worker.EnvOf(v) == env && (mode == "" || v.TimingMode == mode) {
			return v, source, true
		}
	}
	return eval.Verdict{}, "", false
}

// cachedResult is v from the cache as job's answer; source is the
// evaluation that made it.
func cachedResult(job worker.Job, v eval.Verdict, source string) worker.Result {
	v.TaskName = job.Task.Name // the key holds the task's source, not its name
	v.QueueWaitMS, v.ExecMS = nil, nil
	r := worker.Scored(job, v)
	r.Cached, r.Source = true, source
	return r
}
