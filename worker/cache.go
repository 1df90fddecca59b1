package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/kernelgate/kernelgate/harness"
)

// The result cache maps (task source, code, options) to a verdict. The
// gateway looks it up before queueing a job; the worker fills it after an
// evaluation whose outcome would be the same if it ran again.

// cacheKeyVersion changes when the key's inputs change, so old entries are
// never read under a new meaning.
const cacheKeyVersion = "v1"

// CacheKey is the cache key of job: hex sha256 over the task source hash,
// the code hash and the full options (defaults applied, as queued). The task
// name, the reward function and the ids are not part of it: the verdict does
// not depend on them. Options that do not encode (a NaN) have no key.
func CacheKey(job Job) (string, error) {
	opts, err := json.Marshal(job.Options) // a struct: fields in a fixed order
	if err != nil {
		return "", fmt.Errorf("worker.CacheKey: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "kernelgate-cache-%s\n%s\n%s\n%s", cacheKeyVersion,
		harness.HashSource(job.Task.Source), harness.HashSource(job.Code), opts)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Cacheable reports whether v is a deterministic outcome of its inputs, so a
// rerun would give the same answer. Timeouts and resource limits depend on
// the machine's load and harness errors on the harness, so they are run
// again; so is a verdict whose reference failed (task_error). The list is of
// what may be cached, so a status added later is not cached until decided.
func Cacheable(v harness.Verdict) bool {
	if v.TaskError != "" {
		return false
	}
	switch v.Status {
	case harness.StatusCorrect, harness.StatusIncorrect, harness.StatusCompileError,
		harness.StatusRuntimeError, harness.StatusRewardHack, harness.StatusInvalidSubmission:
		return true
	}
	return false
}
