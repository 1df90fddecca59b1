package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
	"github.com/kernelgate/kernelgate/harness/submission"
)

// The result cache maps (task source, code, options, environment) to a
// verdict. The gateway looks it up before queueing a job; the worker fills
// it after an evaluation whose outcome would be the same if it ran again.

// cacheKeyVersion changes when the keys' inputs change, so old entries are
// never read under a new meaning.
//
//	v1: task source hash, code hash, options
//	v2 (2026-12): the work key (v1's inputs) plus the environment (Env): a
//	    verdict made under one harness, torch, triton or GPU model is no
//	    answer for another
const cacheKeyVersion = "v2"

// Env is what of a verdict's environment its outcome may depend on: the
// harness, the toolchain and the GPU model (not which GPU of that model, nor
// its clocks). Versions are releases, without a local build tag (torch's
// 2.11.0+cu130 is 2.11.0): that is how a zygote's hello, all the gateway
// knows before a run, reports them.
type Env struct {
	HarnessVersion string `json:"harness_version"`
	Torch          string `json:"torch"`
	Triton         string `json:"triton"`
	GPU            string `json:"gpu"` // the model, as the GPU names itself; "" on the CPU
}

// EnvOf is the environment v was made in, as v records it.
func EnvOf(v eval.Verdict) Env {
	return Env{HarnessVersion: v.Env.HarnessVersion, Torch: release(v.Env.Torch), Triton: release(v.Env.Triton), GPU: v.Env.GPUName}
}

// release is version v without its local build tag (PEP 440: after "+").
func release(v string) string {
	r, _, _ := strings.Cut(v, "+")
	return r
}

// WorkKey names the work job asks for: hex sha256 over the task source
// hash, the code hash (those the job carries, made when it was) and the
// full options (defaults applied, as queued).
// Jobs with the same work key would get the same verdict on the same
// machine; it is the identity under which identical jobs share one
// evaluation. The task name, the reward function, the completion text around
// the code and the ids are not part of it: the verdict does not depend on
// them. Options that do not encode (a NaN) have no key.
func WorkKey(job Job) (string, error) {
	opts, err := json.Marshal(job.Options) // a struct: fields in a fixed order
	if err != nil {
		return "", fmt.Errorf("dispatch.WorkKey: %w", err)
	}
	job.Hash() // the ones it carries; made here only for a job made without them
	h := sha256.New()
	fmt.Fprintf(h, "kernelgate-work-%s\n%s\n%s\n%s", cacheKeyVersion, job.TaskHash, job.CodeHash, opts)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ShareKey is the identity under which identical jobs in flight share one
// evaluation: the work key; the form of the completion around the code
// (submission.Form), since a shared answer is the owner's verdict as worded
// for its completion (Hinted), and a cut-off completion's words must not
// reach one whose code block closed; and the deadline when there is one, so
// that an item with a deadline shares only with items of that deadline (its
// request's) and never hands a deadline's verdict to a request without one.
// The cache stays keyed by the work alone: a cached verdict answers any.
func ShareKey(job Job) (string, error) {
	wk, err := WorkKey(job)
	if err != nil {
		return wk, err
	}
	if job.Completion != nil {
		if f := submission.Form(*job.Completion, job.FinishReason); f != "" {
			wk += "-f_" + f
		}
	}
	if job.Deadline.IsZero() {
		return wk, nil
	}
	// The key names KV entries, whose keys take only [-/_=.A-Za-z0-9]: the
	// deadline goes in as Unix nanoseconds ("@" and ":" made every such
	// item's claim fail as an invalid key, found by schemathesis).
	return wk + "-d" + strconv.FormatInt(job.Deadline.UnixNano(), 10), nil
}

// CacheKey is the result-cache key of job's verdict made in env: hex sha256
// over its work key and env.
func CacheKey(job Job, env Env) (string, error) {
	work, err := WorkKey(job)
	if err != nil {
		return "", fmt.Errorf("dispatch.CacheKey: %w", err)
	}
	e, err := json.Marshal(env)
	if err != nil {
		return "", fmt.Errorf("dispatch.CacheKey: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "kernelgate-cache-%s\n%s\n%s", cacheKeyVersion, work, e)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Cacheable reports whether v is a deterministic outcome of its inputs, so a
// rerun would give the same answer. Timeouts and resource limits depend on
// the machine's load and harness errors on the harness, so they are run
// again; so is a verdict whose reference failed (task_error). The list is of
// what may be cached, so a status added later is not cached until decided.
func Cacheable(v eval.Verdict) bool {
	if v.TaskError != "" {
		return false
	}
	switch v.Status {
	case eval.StatusCorrect, eval.StatusIncorrect, eval.StatusCompileError,
		eval.StatusRuntimeError, eval.StatusRewardHack, eval.StatusInvalidSubmission:
		return true
	}
	return false
}

// Pool is a local harness that can say what it runs on; *harness.Supervisor
// is one.
type Pool interface {
	Hello() (harness.Hello, bool)
	GPUs() gpu.Info
	Stats() []harness.ZygoteStats
}

// PoolEnvs is the environments p's zygotes that are up evaluate in, each
// once: the versions from the zygotes' hello (one Python install serves
// them all), the model of each zygote's GPU. None before a zygote is up.
// The GPU model is NVML's name, the verdict's is the child's (torch's); both
// are the driver's name for the device.
func PoolEnvs(p Pool) []Env {
	h, ok := p.Hello()
	if !ok {
		return nil
	}
	names := map[int]string{}
	for _, d := range p.GPUs().Devices {
		names[d.Index] = d.Name
	}
	var out []Env
	seen := map[Env]bool{}
	for _, st := range p.Stats() {
		if !st.Up {
			continue
		}
		e := Env{HarnessVersion: h.HarnessVersion, Torch: release(h.Torch), Triton: release(h.Triton)}
		if idx, isGPU := strings.CutPrefix(st.Label, "gpu"); isGPU {
			n, err := strconv.Atoi(idx)
			if e.GPU = names[n]; err != nil || e.GPU == "" {
				continue // a GPU of no known model: nothing can match it
			}
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// CacheValue is what the result cache holds for v: its JSON with, beside the
// verdict's fields, source_eval_id, the evaluation that made it, so a row
// answered from the cache points to the row that ran.
func CacheValue(v eval.Verdict, evalID string) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("dispatch.CacheValue: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("dispatch.CacheValue: %w", err)
	}
	if m["source_eval_id"], err = json.Marshal(evalID); err != nil {
		return nil, fmt.Errorf("dispatch.CacheValue: %w", err)
	}
	return json.Marshal(m)
}

// CacheEntry reads a result-cache value: the verdict and the evaluation that
// made it ("" in entries written before it was kept).
func CacheEntry(data []byte) (eval.Verdict, string, error) {
	var v eval.Verdict
	if err := json.Unmarshal(data, &v); err != nil {
		return v, "", fmt.Errorf("dispatch.CacheEntry: %w", err)
	}
	var src struct {
		ID string `json:"source_eval_id"`
	}
	_ = json.Unmarshal(data, &src) // it decoded as a verdict: it decodes
	return v, src.ID, nil
}
