package dispatch

import (
	"context"

	"github.com/kernelgate/kernelgate/eval"
)

// fromCache returns the verdict the result cache holds for job's work, made
// in an environment of the workers that would run job now (Service.Envs), or
// ok false. Workers file each verdict under the environment it records, so
// one made under another harness, torch, triton or GPU model is never
// served. A cache that fails costs an evaluation, never the request.
func (s *Service) fromCache(ctx context.Context, job Job) (eval.Verdict, string, bool) {
	mode := s.mode()
	for _, env := range s.envs() {
		key, err := CacheKey(job, env)
		if err != nil {
			return eval.Verdict{}, "", false
		}
		data, ok, err := s.Bus.CacheGet(ctx, key)
		if err != nil {
			s.log().Warn("result cache lookup failed; evaluating", "job", job.ID, "err", err)
			return eval.Verdict{}, "", false
		}
		if !ok {
			continue
		}
		v, source, err := CacheEntry(data)
		if err != nil {
			s.log().Warn("malformed cache entry; evaluating", "job", job.ID, "err", err)
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
