package gateway

import (
	"context"
	"encoding/json"

	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/worker"
)

// fromCache returns job's result from the result cache (filled by workers,
// keyed by worker.CacheKey), scored with job's reward function, or ok false
// on a miss. A cache that fails costs an evaluation, never the request.
func (s *Server) fromCache(ctx context.Context, job worker.Job) (worker.Result, bool) {
	key, err := worker.CacheKey(job)
	if err != nil {
		return worker.Result{}, false
	}
	data, ok, err := s.deps.Bus.CacheGet(ctx, key)
	if err != nil {
		s.log.Warn("result cache lookup failed; evaluating", "job", job.ID, "err", err)
		return worker.Result{}, false
	}
	if !ok {
		return worker.Result{}, false
	}
	var v harness.Verdict
	if err := json.Unmarshal(data, &v); err != nil {
		s.log.Warn("malformed cache entry; evaluating", "job", job.ID, "err", err)
		return worker.Result{}, false
	}
	// A verdict made on other hardware (the CPU interpreter, say) does not
	// answer for this one's workers.
	if mode := s.deps.TimingMode(); !worker.Cacheable(v) || (mode != "" && v.TimingMode != mode) {
		return worker.Result{}, false
	}
	v.TaskName = job.Task.Name // the key holds the task's source, not its name
	v.QueueWaitMS, v.ExecMS = nil, nil
	r := resultOf(job, v)
	r.Cached = true
	return r, true
}
