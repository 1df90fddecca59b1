package eval

import (
	"crypto/sha256"
	"encoding/hex"
)

// Task is a KernelBench-format reference problem.
type Task struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Source string `json:"source"`
}

// Job is one evaluation: a candidate's code against a task.
type Job struct {
	Task    Task    `json:"task"`
	Code    string  `json:"code"`
	Options Options `json:"options"`
	// TaskCheck runs only the reference stage and ignores Code: the verdict
	// says whether the task itself is valid (docs/protocol.md, "Task checks").
	// Since protocol 1.1.
	TaskCheck bool `json:"task_check,omitempty"`
	// Check tunes a task check (nil: the defaults). Since protocol 1.2.
	Check *CheckOptions `json:"check,omitempty"`

	// TaskHash and CodeHash are HashSource of Task.Source and of Code, made
	// once where the job is made (Hash) and carried with it to its verdict
	// and to the keys that name its work. They are Go's alone: the harness
	// protocol does not send them (a queued job carries them beside its
	// fields: dispatch.Job).
	TaskHash string `json:"-"`
	CodeHash string `json:"-"`
}

// Hash sets the hashes j does not carry yet. It is where a job's hashes
// are made: a job that carries them keeps them, so whoever passes a job on
// passes its hashes with it instead of hashing its source again.
func (j *Job) Hash() {
	if j.TaskHash == "" {
		j.TaskHash = HashSource(j.Task.Source)
	}
	if j.CodeHash == "" {
		j.CodeHash = HashSource(j.Code)
	}
}

// HashSource is the task_hash/code_hash form: "sha256:" + hex of the exact text.
func HashSource(src string) string {
	sum := sha256.Sum256([]byte(src))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckOptions tune a task check (docs/protocol.md, "Task checks"). Zero fields
// take the harness's defaults.
type CheckOptions struct {
	// Depth is "full" (run the reference for real; the default), "shapes"
	// (one forward call on the meta device only) or "auto" (full where the
	// device can afford it: always on a GPU; on a CPU when one call is at most
	// AutoMB and AutoGFLOP).
	Depth     string  `json:"depth,omitempty"`
	AutoGFLOP float64 `json:"auto_gflop,omitempty"`
	AutoMB    float64 `json:"auto_mb,omitempty"`
	// MaxMB rejects a task whose inputs, parameters and outputs of one call
	// exceed it (default 4096).
	MaxMB float64 `json:"max_mb,omitempty"`
}
