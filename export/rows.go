package export

import (
	"maps"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// Evaluation is one row of the evaluations table: the event's ids and
// inputs and the verdict flattened into typed columns. Optional columns are
// pointers (null when nil), or strings tagged optional, where "" means not
// known and is written as null (through WriteRows: parquet-go's batch Write
// lets some through as ""), so a reader tests IS NULL, never = "".
// EvaluationRow is the one mapping that fills it.
// Where a verdict part keeps its shape in the row (Env), the row embeds the
// verdict's own type, whose parquet tags name the columns; the parts that
// are flattened (runtimes, tolerance, stage times) are mapped below. A test
// holds every verdict field to its place here (verdictcolumns_test.go).
type Evaluation struct {
	EventID   string    `parquet:"event_id"`
	TS        time.Time `parquet:"ts,timestamp(millisecond)"`
	EvalID    string    `parquet:"eval_id"`
	BatchID   string    `parquet:"batch_id"`
	RequestID string    `parquet:"request_id,optional"` // null: the caller sent no X-Request-ID
	ClientID  string    `parquet:"client_id,optional"`  // null: no API key (open mode), or a search's
	// TaskID: null for an inline reference that is no registered task (task_hash names it).
	TaskID     string  `parquet:"task_id,optional"`
	TaskName   string  `parquet:"task_name,optional"`
	TaskHash   string  `parquet:"task_hash"`
	CodeHash   string  `parquet:"code_hash"`
	Code       string  `parquet:"code"`
	Completion *string `parquet:"completion,optional"`
	// Prompt: the chat messages the completion answered; empty when the
	// caller did not give them.
	Prompt []event.PromptMessage `parquet:"prompt,list"`
	// SourceEvalID: a cached or shared row's evaluation that ran (null otherwise).
	SourceEvalID *string `parquet:"source_eval_id,optional"`
	// Options: the harness options of the verdict (null in rows logged without).
	Options  *OptionsRow `parquet:"options,optional"`
	RewardFn string      `parquet:"reward_fn"`
	Reward   *float64    `parquet:"reward,optional"`
	Cached   bool        `parquet:"cached"`
	// Valid (schema 1.5) is the API's valid for this answer: false when the
	// verdict says nothing of the candidate (a deadline stop, a broken
	// reference, a harness error) and a trainer drops the sample. Null only
	// in files written before the column (IsValid judges those).
	Valid *bool `parquet:"valid,optional"`
	// Retry (schema 1.5) is the verdict's retry: "deadline" when the
	// request's deadline_s stopped the evaluation, "gpu_oom" when its
	// retries ran out; null otherwise.
	Retry string `parquet:"retry,optional"`

	SchemaVersion     string   `parquet:"schema_version"` // the verdict's
	Status            string   `parquet:"status"`
	Compiled          bool     `parquet:"compiled"`
	Correct           bool     `parquet:"correct"`
	Speedup           *float64 `parquet:"speedup,optional"`
	RuntimeMedianMS   *float64 `parquet:"runtime_median_ms,optional"`
	RuntimeP10MS      *float64 `parquet:"runtime_p10_ms,optional"`
	RuntimeP90MS      *float64 `parquet:"runtime_p90_ms,optional"`
	RuntimeIterations *int64   `parquet:"runtime_iterations,optional"`
	RefMedianMS       *float64 `parquet:"ref_median_ms,optional"`
	RefBeforeMedianMS *float64 `parquet:"ref_before_median_ms,optional"`
	RefAfterMedianMS  *float64 `parquet:"ref_after_median_ms,optional"`
	TimingMode        string   `parquet:"timing_mode"`
	MaxAbsError       *float64 `parquet:"max_abs_error,optional"`
	MaxRelError       *float64 `parquet:"max_rel_error,optional"`
	Atol              *float64 `parquet:"atol,optional"`
	Rtol              *float64 `parquet:"rtol,optional"`
	TolDType          string   `parquet:"tol_dtype,optional"`
	TolSource         string   `parquet:"tol_source,optional"`
	TrialsPassed      int64    `parquet:"trials_passed"`
	TrialsTotal       int64    `parquet:"trials_total"`
	HackFlags         []string `parquet:"hack_flags,list"`
	Warnings          []string `parquet:"warnings,list"`
	TritonLaunches    int64    `parquet:"triton_launches"`
	Coverage          *float64 `parquet:"coverage,optional"`
	Feedback          string   `parquet:"feedback,optional"`
	ErrorSignature    string   `parquet:"error_signature,optional"`
	TaskError         string   `parquet:"task_error,optional"`
	OutputTail        string   `parquet:"output_tail,optional"`
	// StageTimes is the verdict's stage_ms as (stage, ms) pairs, sorted by
	// stage: a list of structs, which every loader reads (Hugging Face
	// datasets has no type for the MAP column schema 1.2 wrote as stage_ms).
	StageTimes []StageTime `parquet:"stage_times,list"`
	// ReferenceShared (schema 1.4): the verdict's reference_shared.
	ReferenceShared bool `parquet:"reference_shared"`

	// Env: where it ran, the verdict's env columns as they are.
	eval.Env

	QueueWaitMS *float64 `parquet:"queue_wait_ms,optional"`
	ExecMS      *float64 `parquet:"exec_ms,optional"`

	// TaskSource is the task's reference source (exports rebuild the
	// prompt from it); null in files written before the column existed.
	TaskSource string `parquet:"task_source,optional"`
}

// EpisodeStep is one row of the episode_steps table.
type EpisodeStep struct {
	EventID     string                `parquet:"event_id"`
	TS          time.Time             `parquet:"ts,timestamp(millisecond)"`
	EpisodeID   string                `parquet:"episode_id"`
	Turn        int64                 `parquet:"turn"`
	ClientID    string                `parquet:"client_id,optional"` // null: no API key (open mode)
	TaskID      string                `parquet:"task_id"`
	Prompt      []event.PromptMessage `parquet:"prompt,list"`
	Completion  string                `parquet:"completion"`
	Observation string                `parquet:"observation"`
	Reward      float64               `parquet:"reward"`
	Done        bool                  `parquet:"done"`
	DoneReason  *string               `parquet:"done_reason,optional"` // null while the episode runs
	MaxTurns    int64                 `parquet:"max_turns"`
	EvalID      string                `parquet:"eval_id"`
	Status      string                `parquet:"status"`
	Speedup     *float64              `parquet:"speedup,optional"`
}

// Rejected is one row of the rejected table: an event the sink could not
// turn into a row, kept with its raw bytes so nothing is silently dropped.
type Rejected struct {
	EventID      string    `parquet:"event_id"`
	TS           time.Time `parquet:"ts,timestamp(millisecond)"` // when the sink received it
	Subject      string    `parquet:"subject"`
	Data         []byte    `parquet:"data"`
	Error        string    `parquet:"error"`
	NumDelivered int64     `parquet:"num_delivered"`
}

// rowTime is the ts column's form: UTC, millisecond precision.
func rowTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// EvaluationRow flattens ev into an evaluations row.
func EvaluationRow(ev event.Evaluation) Evaluation {
	v := ev.Verdict
	r := Evaluation{
		EventID: ev.EventID, TS: rowTime(ev.Time),
		EvalID: ev.EvalID, BatchID: ev.BatchID, RequestID: ev.RequestID, ClientID: ev.ClientID,
		TaskID: ev.TaskID, TaskName: v.TaskName, TaskHash: v.TaskHash, CodeHash: v.CodeHash,
		Code: ev.Code, Completion: ev.Completion, Prompt: nonNil(ev.Prompt), RewardFn: ev.RewardFn, Reward: ev.Reward, Cached: ev.Cached,
		Valid: clonePtr(ev.Valid), Retry: v.Retry,
		Options:    optionsRow(ev.Options),
		TaskSource: ev.TaskSource,

		SchemaVersion: v.SchemaVersion, Status: string(v.Status), Compiled: v.Compiled, Correct: v.Correct,
		Speedup: v.Speedup, TimingMode: v.TimingMode,
		MaxAbsError: v.MaxAbsError, MaxRelError: v.MaxRelError,
		TrialsPassed: int64(v.TrialsPassed), TrialsTotal: int64(v.TrialsTotal),
		HackFlags: nonNil(v.HackFlags), Warnings: nonNil(v.Warnings),
		TritonLaunches: int64(v.TritonLaunches), Coverage: v.Coverage,
		Feedback: v.Feedback, ErrorSignature: v.ErrorSignature, TaskError: v.TaskError, OutputTail: v.OutputTail,
		StageTimes: stageTimes(v.StageMS), ReferenceShared: v.ReferenceShared,

		Env: v.Env,

		QueueWaitMS: ev.QueueWaitMS, ExecMS: ev.ExecMS,
	}
	r.SMClockMHzBefore, r.SMClockMHzAfter = clonePtr(v.Env.SMClockMHzBefore), clonePtr(v.Env.SMClockMHzAfter)
	if rt := v.Runtime; rt != nil {
		r.RuntimeMedianMS, r.RuntimeP10MS, r.RuntimeP90MS = ptr(rt.MedianMS), ptr(rt.P10MS), ptr(rt.P90MS)
		r.RuntimeIterations = ptr(int64(rt.Iterations))
	}
	r.RefMedianMS = median(v.RefRuntime)
	r.RefBeforeMedianMS = median(v.RefRuntimeBefore)
	r.RefAfterMedianMS = median(v.RefRuntimeAfter)
	if r.Valid == nil { // a publisher that did not say: judged as the API judges
		r.Valid = ptr(validFor(ev.RewardFn, v))
	}
	if ev.SourceEvalID != "" {
		r.SourceEvalID = ptr(ev.SourceEvalID)
	}
	if tol := v.Tolerance; tol != nil {
		r.Atol, r.Rtol = ptr(tol.Atol), ptr(tol.Rtol)
		r.TolDType, r.TolSource = tol.DType, tol.Source
	}
	return r
}

// EpisodeStepRow turns ev into an episode_steps row.
func EpisodeStepRow(ev event.EpisodeStep) EpisodeStep {
	r := EpisodeStep{
		EventID: ev.EventID, TS: rowTime(ev.Time), EpisodeID: ev.EpisodeID, Turn: int64(ev.Turn),
		ClientID: ev.ClientID, TaskID: ev.TaskID, Prompt: nonNil(ev.Prompt), Completion: ev.Completion,
		Observation: ev.Observation, Reward: ev.Reward, Done: ev.Done, MaxTurns: int64(ev.MaxTurns),
		EvalID: ev.EvalID, Status: ev.Status, Speedup: ev.Speedup,
	}
	if ev.DoneReason != "" {
		r.DoneReason = ptr(ev.DoneReason)
	}
	return r
}

// ptr returns a pointer to a copy of v, so rows never alias the verdict.
func ptr[T any](v T) *T { return &v }

func median(rt *eval.Runtime) *float64 {
	if rt == nil {
		return nil
	}
	return ptr(rt.MedianMS)
}

// clonePtr copies what p points to, so a row does not alias the verdict.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

// nonNil returns s, or an empty list for nil: a list column reads back as
// empty, never null, so rows compare equal after a round trip.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// StageTime is one stage of an evaluation and its milliseconds.
type StageTime struct {
	Stage string  `parquet:"stage"`
	MS    float64 `parquet:"ms"`
}

func stageTimes(m map[string]float64) []StageTime {
	out := make([]StageTime, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, StageTime{Stage: k, MS: m[k]})
	}
	return out
}

// OptionsRow is eval.Options as a column group.
type OptionsRow struct {
	Seeds          int64    `parquet:"seeds"`
	Seed           int64    `parquet:"seed"`
	Atol           *float64 `parquet:"atol,optional"` // null: by the output dtype
	Rtol           *float64 `parquet:"rtol,optional"`
	Timing         bool     `parquet:"timing"`
	TimingBudgetMS int64    `parquet:"timing_budget_ms"`
	MinIters       int64    `parquet:"min_iters"`
	MaxIters       int64    `parquet:"max_iters"`
	TimeoutS       int64    `parquet:"timeout_s"`
	MemoryLimitMB  int64    `parquet:"memory_limit_mb"`
	RequireTriton  bool     `parquet:"require_triton"`
	CPUTiming      bool     `parquet:"cpu_timing"`
}

func optionsRow(o *eval.Options) *OptionsRow {
	if o == nil {
		return nil
	}
	return &OptionsRow{
		Seeds: int64(o.Seeds), Seed: int64(o.Seed), Atol: o.Atol, Rtol: o.Rtol, Timing: o.Timing,
		TimingBudgetMS: int64(o.TimingBudgetMS), MinIters: int64(o.MinIters), MaxIters: int64(o.MaxIters),
		TimeoutS: int64(o.TimeoutS), MemoryLimitMB: int64(o.MemoryLimitMB),
		RequireTriton: o.RequireTriton == nil || *o.RequireTriton, CPUTiming: o.CPUTiming,
	}
}
