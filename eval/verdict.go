package eval

// SchemaVersion is the verdict schema (MAJOR.MINOR). It is logged and
// exported, so it changes independently of the process protocol.
//
// Changelog:
//   - 1.0 (2026-11-29): first version.
//   - 1.1 (2026-11-30): flags forge and no_triton; wall_check (the judge's clock
//     against the runners' timers).
//   - 1.2 (2026-12-01): status compile_timeout.
//   - 1.3 (2026-12-01): reference_shared (the evaluation used the reference work an
//     earlier evaluation of the task published).
//   - 1.4 (2026-12-04): tolerance.source "task" (the task's own ATOL / RTOL).
//   - 1.5 (2026-12-04): a task check's task_info.reference_error (how far the
//     reference is from its exact answer) and its warning.
//   - 1.6 (2026-12-04): reference_error.held (measured on a held-out set where one
//     call is too large for the float64 pass).
//   - 1.7 (2026-12-06): reference_checked (the task's reference was seen to work
//     before the verdict blamed the candidate).
const SchemaVersion = "1.7"

// Status is the closed set of evaluation outcomes.
type Status string

const (
	StatusCorrect      Status = "correct"
	StatusIncorrect    Status = "incorrect"
	StatusCompileError Status = "compile_error"
	StatusRuntimeError Status = "runtime_error"
	StatusTimeout      Status = "timeout"
	// StatusCompileTimeout (schema 1.2): the candidate's load and first call
	// (import, Triton JIT, autotune) outran compile_timeout_s.
	StatusCompileTimeout    Status = "compile_timeout"
	StatusResourceLimit     Status = "resource_limit"
	StatusRewardHack        Status = "reward_hack"
	StatusInvalidSubmission Status = "invalid_submission"
	StatusHarnessError      Status = "harness_error"
)

// Statuses lists every status in a stable order (reports, metrics).
var Statuses = []Status{
	StatusCorrect, StatusIncorrect, StatusCompileError, StatusRuntimeError,
	StatusTimeout, StatusCompileTimeout, StatusResourceLimit, StatusRewardHack,
	StatusInvalidSubmission, StatusHarnessError,
}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// Hack flag names (docs/hacks.md). They are logged and exported: never rename.
const (
	FlagSideStream         = "side_stream"
	FlagThread             = "thread"
	FlagLazyOutput         = "lazy_output"
	FlagPatch              = "patch"
	FlagStaleMemory        = "stale_memory"
	FlagInputMutation      = "input_mutation"
	FlagCache              = "cache"
	FlagPhaseDetect        = "phase_detect"
	FlagDeferredBatch      = "deferred_batch"
	FlagDecoy              = "decoy"
	FlagPrecision          = "precision"
	FlagDegenerate         = "degenerate"
	FlagHardcode           = "hardcode"
	FlagIntrospection      = "introspection"
	FlagExit               = "exit"
	FlagEscape             = "escape"
	FlagResource           = "resource"
	FlagCachePoison        = "cache_poison"
	FlagCompilePassthrough = "compile_passthrough"
	FlagTooFast            = "too_fast"
	// Schema 1.1. forge: the candidate's process broke the judge's protocol (a
	// malformed or unexpected message, outputs rewritten after "done", a time the
	// judge's clock cannot confirm). no_triton: it launched no Triton kernel of its
	// own while the evaluation required one (option require_triton).
	FlagForge    = "forge"
	FlagNoTriton = "no_triton"
)

// HackFlags lists every flag name in the order of docs/protocol.md.
var HackFlags = []string{
	FlagSideStream, FlagThread, FlagLazyOutput, FlagPatch, FlagStaleMemory,
	FlagInputMutation, FlagCache, FlagPhaseDetect, FlagDeferredBatch, FlagDecoy,
	FlagPrecision, FlagDegenerate, FlagHardcode, FlagIntrospection, FlagExit,
	FlagEscape, FlagResource, FlagCachePoison, FlagCompilePassthrough, FlagTooFast,
	FlagForge, FlagNoTriton,
}

// Timing modes.
const (
	TimingGPU            = "gpu"
	TimingCPUInterpreter = "cpu_interpreter"
)

// Runtime is the distribution of one timed model.
type Runtime struct {
	MedianMS   float64 `json:"median_ms"`
	P10MS      float64 `json:"p10_ms"`
	P90MS      float64 `json:"p90_ms"`
	MinMS      float64 `json:"min_ms"`
	MaxMS      float64 `json:"max_ms"`
	MeanMS     float64 `json:"mean_ms"`
	Spread     float64 `json:"spread"` // p90/p10
	Iterations int     `json:"iterations"`
}

// Tolerance is what the correctness check compared with.
type Tolerance struct {
	Atol  float64 `json:"atol"`
	Rtol  float64 `json:"rtol"`
	DType string  `json:"dtype"`
	// Source: where atol and rtol came from, "request" (the job's options) over
	// "task" (the task file's ATOL / RTOL) over "default" (by the output dtype).
	Source string `json:"source"`
}

// Env describes where the evaluation ran. GPUUUID, Driver and the SM clocks
// are filled by Go from NVML; the rest by the child. The parquet tags are the
// evaluations table's columns (package export embeds Env): each is optional,
// so a part not known ("" here: no GPU, or a verdict made without a child)
// is written as null.
type Env struct {
	Device           string `json:"device" parquet:"device,optional"`
	GPUName          string `json:"gpu_name,omitempty" parquet:"gpu_name,optional"`
	GPUUUID          string `json:"gpu_uuid,omitempty" parquet:"gpu_uuid,optional"`
	SMClockMHzBefore *int   `json:"sm_clock_mhz_before,omitempty" parquet:"sm_clock_mhz_before,optional"`
	SMClockMHzAfter  *int   `json:"sm_clock_mhz_after,omitempty" parquet:"sm_clock_mhz_after,optional"`
	Driver           string `json:"driver,omitempty" parquet:"driver,optional"`
	Python           string `json:"python" parquet:"python,optional"`
	Torch            string `json:"torch" parquet:"torch,optional"`
	Triton           string `json:"triton" parquet:"triton,optional"`
	HarnessVersion   string `json:"harness_version" parquet:"harness_version,optional"`
	Sandbox          string `json:"sandbox" parquet:"sandbox,optional"`
	SandboxDetail    string `json:"sandbox_detail" parquet:"sandbox_detail,optional"`
}

// Verdict is the outcome of one evaluation (schema 1.1, docs/protocol.md).
// Nullable numbers are pointers: nil encodes as null.
type Verdict struct {
	SchemaVersion    string             `json:"schema_version"`
	Status           Status             `json:"status"`
	Compiled         bool               `json:"compiled"`
	Correct          bool               `json:"correct"`
	Speedup          *float64           `json:"speedup"`
	Runtime          *Runtime           `json:"runtime"`
	RefRuntime       *Runtime           `json:"ref_runtime"`
	RefRuntimeBefore *Runtime           `json:"ref_runtime_before"`
	RefRuntimeAfter  *Runtime           `json:"ref_runtime_after"`
	TimingMode       string             `json:"timing_mode"`
	MaxAbsError      *float64           `json:"max_abs_error"`
	MaxRelError      *float64           `json:"max_rel_error"`
	Tolerance        *Tolerance         `json:"tolerance"`
	TrialsPassed     int                `json:"trials_passed"`
	TrialsTotal      int                `json:"trials_total"`
	HackFlags        []string           `json:"hack_flags"`
	Warnings         []string           `json:"warnings"`
	TritonLaunches   int                `json:"triton_launches"`
	Coverage         *float64           `json:"coverage"`
	Feedback         string             `json:"feedback"`
	ErrorSignature   string             `json:"error_signature"`
	TaskError        string             `json:"task_error"`
	OutputTail       string             `json:"output_tail"`
	StageMS          map[string]float64 `json:"stage_ms"`
	// WallCheck is the judge's cross-check of the candidate's timer (schema 1.1);
	// nil when nothing was timed.
	WallCheck *WallCheck `json:"wall_check"`
	// DeviceMemory is each process's peak device memory (GPU mode; schema 1.1): what
	// the next evaluation of the task reserves (admission by memory).
	DeviceMemory *DeviceMemory `json:"device_memory"`
	// Retry is non-empty when the verdict is not the evaluation's outcome but a
	// reason to run it again: "gpu_oom", out of device memory while other work held
	// it. The supervisor retries (Supervisor.Evaluate); what reaches a caller has it
	// empty unless the retries ran out. "deadline" (set by the worker): the
	// request's deadline_s stopped the evaluation.
	Retry string `json:"retry"`
	// ReferenceShared (schema 1.3): the evaluation compared its candidate with the
	// reference outputs, the checks that the reference is not degenerate and the
	// alone-timing an earlier evaluation of the same task published on this GPU
	// (docs/protocol.md, shared reference work).
	ReferenceShared bool `json:"reference_shared"`
	// ReferenceChecked (schema 1.7): the task's reference was seen to work, in
	// this evaluation (its outputs on every seed passed the checks that reject a
	// degenerate reference, or came from an earlier evaluation's that had) or
	// before it. A failure is put on
	// the candidate only when it is true; the supervisor checks the task
	// otherwise (harness/reference.go).
	ReferenceChecked bool   `json:"reference_checked"`
	Env              Env    `json:"env"`
	TaskName         string `json:"task_name"`
	TaskHash         string `json:"task_hash"`
	CodeHash         string `json:"code_hash"`
	// TaskInfo describes the task; only a task check's verdict has it.
	TaskInfo *TaskInfo `json:"task_info,omitempty"`
	// The gateway's two deadlines, measured by its worker (absent from
	// `kernelgate eval` and from answers out of the result cache): time in the
	// job queue, and the harness's own time for this evaluation.
	QueueWaitMS *float64 `json:"queue_wait_ms,omitempty"`
	ExecMS      *float64 `json:"exec_ms,omitempty"`
}

// DeviceMemory is the peak device memory (MiB, torch's reserved) of the
// evaluation's processes; the three CUDA contexts come on top.
type DeviceMemory struct {
	ReferenceMB float64 `json:"reference_mb"`
	CandidateMB float64 `json:"candidate_mb"`
	JudgeMB     float64 `json:"judge_mb"`
}

// WallCheck compares, per timed call, the judge's wall time minus the time the
// runner reported ("overhead"): the candidate's median overhead may exceed the
// reference's by at most LimitMS, else the verdict carries the flag forge.
type WallCheck struct {
	RefOverheadMS  float64 `json:"ref_overhead_ms"`
	CandOverheadMS float64 `json:"cand_overhead_ms"`
	LimitMS        float64 `json:"limit_ms"`
	// Pairs is how many interleaved calls were compared; ExcessP10MS and
	// ExcessP90MS spread the call-by-call excess (candidate minus reference).
	Pairs       int     `json:"pairs"`
	ExcessP10MS float64 `json:"excess_p10_ms"`
	ExcessP90MS float64 `json:"excess_p90_ms"`
	// HeadMS is the GPU spin queued ahead of every timed call, one length for
	// both sides (twice the larger side's median enqueue, 0.3-20 ms);
	// RefEnqueueMS and CandEnqueueMS are each side's median host time to
	// enqueue a call. Absent on a CPU.
	HeadMS        *float64 `json:"head_ms,omitempty"`
	RefEnqueueMS  *float64 `json:"ref_enqueue_ms,omitempty"`
	CandEnqueueMS *float64 `json:"cand_enqueue_ms,omitempty"`
}

// TaskInfo is what a task check found out about a task without computing
// it (one forward call on the meta device), and how deep the check went.
type TaskInfo struct {
	Name        string       `json:"name"` // the module docstring's first line
	Tags        []string     `json:"tags"` // the module's literal TAGS list
	Outputs     []OutputSpec `json:"outputs"`
	InputBytes  *int64       `json:"input_bytes"` // nil when the meta pass failed
	ParamBytes  *int64       `json:"param_bytes"`
	OutputBytes *int64       `json:"output_bytes"`
	FLOPs       *int64       `json:"flops"` // matmuls and convolutions (torch's FlopCounterMode)
	MetaError   string       `json:"meta_error"`
	Depth       string       `json:"depth,omitempty"` // "full" or "shapes"; empty if the check stopped before deciding
	// ReferenceError is the float64 pass of a check run in full; nil otherwise.
	ReferenceError *ReferenceError `json:"reference_error,omitempty"`
}

// ReferenceError is how far a task's reference is from its exact answer: a
// float64 copy of the reference on the same inputs, rounded once to each
// output's dtype, compared as a candidate is. Used is the worst element's
// share of the tolerance (over 0.5, the check warns: an honest kernel that
// rounds differently can be rejected); nil when the pass could not say, and
// Note says why. Seed or Held names the inputs of the worst element: Held, a
// held-out set's index, where one call was too large for the pass (then a floor
// under the main inputs' worst, and Note says so).
type ReferenceError struct {
	Used      *float64 `json:"used"`
	Seed      *int64   `json:"seed,omitempty"`
	Held      *int     `json:"held,omitempty"`
	Output    *int     `json:"output,omitempty"`
	Index     []int64  `json:"index,omitempty"`
	Reference *float64 `json:"reference,omitempty"`
	Exact     *float64 `json:"exact,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// OutputSpec is one output tensor's shape and dtype.
type OutputSpec struct {
	Shape []int64 `json:"shape"`
	DType string  `json:"dtype"`
}

// Normalize replaces absent lists and maps with empty ones, so a verdict
// always encodes "hack_flags": [] rather than null, as the schema shows.
func (v *Verdict) Normalize() {
	if v.HackFlags == nil {
		v.HackFlags = []string{}
	}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	if v.StageMS == nil {
		v.StageMS = map[string]float64{}
	}
	if v.SchemaVersion == "" {
		v.SchemaVersion = SchemaVersion
	}
}
