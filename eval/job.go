package eval

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
