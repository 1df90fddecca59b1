package dispatch

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// Subject is where evaluation jobs for workers of a timing mode are queued,
// and Durable the consumer those workers share: jobs.eval.gpu and
// jobs.eval.cpu. A worker takes only its own mode's jobs, so a CPU worker
// that joins a cluster of GPU workers never answers a GPU request with a
// verdict that has no speedup. A job's mode is its gateway's workers' (its
// own, or those announced when it has none); unknown or mixed: gpu.
func Subject(mode string) string { return "jobs.eval." + modeClass(mode) }

// Durable: see Subject.
func Durable(mode string) string { return "eval-workers-" + modeClass(mode) }

// InteractiveSubject is where jobs someone is waiting on one by one (a
// search's evaluations) are queued: a worker's free slot takes them before
// any job of Subject, so a search does not wait behind a bulk RL batch.
func InteractiveSubject(mode string) string { return "jobs.interactive." + modeClass(mode) }

// InteractiveDurable: see InteractiveSubject.
func InteractiveDurable(mode string) string { return "interactive-workers-" + modeClass(mode) }

func modeClass(mode string) string {
	if mode == eval.TimingCPUInterpreter {
		return "cpu"
	}
	return "gpu"
}

// ResultsSubject is the core NATS subject the results of a batch are
// announced on.
func ResultsSubject(batchID string) string { return "results." + batchID }

// Job is one queued evaluation (the JSON body of a jobs.eval.<mode>
// message): the evaluation the harness runs, eval.Job, and what the queue
// needs around it. The embedded fields keep the names a job had on the wire
// before it embedded eval.Job (task, code, options, task_check), so a job
// queued by the previous version decodes; check, which it did not carry,
// is omitted when nil. The job's hashes travel as task_hash and code_hash
// (MarshalJSON), so the worker, the result cache and the verdict use the
// ones made when the job was.
type Job struct {
	ID      string `json:"id"` // also the bus message id and the event id
	BatchID string `json:"batch_id"`
	Index   int    `json:"index"` // position in the request
	eval.Job
	Completion *string `json:"completion,omitempty"` // raw text the code was extracted from
	// FinishReason is why the model stopped writing Completion, when the
	// caller said; "length" marks it cut off (submission.Word).
	FinishReason string `json:"finish_reason,omitempty"`
	// Prompt is what the model was asked, when the caller said; logged, not hashed.
	Prompt     []event.PromptMessage `json:"prompt,omitempty"`
	RewardFn   string                `json:"reward_fn,omitempty"`
	EnqueuedAt time.Time             `json:"enqueued_at"`
	// Who asked (logged with the verdict): the HTTP request and the API key name.
	RequestID string `json:"request_id,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	// TaskID is the registry id of Task ("" for an inline reference); it
	// goes into the evaluation's event.
	TaskID string `json:"task_id,omitempty"`
	// Deadline (zero: none) is when the request stops waiting for this item:
	// an item not finished by then is answered harness_error with retry
	// "deadline" (valid false: the trainer drops it) and its evaluation is
	// stopped, so a group's verdicts arrive together: a trainer's step waits
	// for its slowest item.
	Deadline time.Time `json:"deadline,omitzero"`
	// Share lets identical jobs in flight share this job's evaluation
	// (share.go); false when the request bypassed the cache, which asks
	// for an evaluation of its own.
	Share bool `json:"share,omitempty"`
	// Unlogged: whoever queued the job logs its evaluation itself (a search
	// step, with its prompt and the step's eval_id), so the worker does not.
	Unlogged bool `json:"unlogged,omitempty"`
	// LogID is the eval_id an Unlogged job's queuer logs it under (a search
	// step's): the result cache names it as the evaluation that ran, so a
	// verdict served from the cache later points at a row of the log. "":
	// the job's ID.
	LogID string `json:"log_id,omitempty"`
	// Lead marks the first job a batch of several queued: a worker starts
	// it beside another rather than alone (worker/gang.go), so a group's
	// verdicts arrive together.
	Lead bool `json:"lead,omitempty"`
}

// Result is stored in the bus's batches bucket and then published on
// ResultsSubject(BatchID), once a job's verdict is logged.
type Result struct {
	Index   int          `json:"index"`
	ID      string       `json:"id"`
	Reward  float64      `json:"reward"`
	Valid   bool         `json:"valid"`
	Note    string       `json:"note,omitempty"`
	Verdict eval.Verdict `json:"verdict"`
	Cached  bool         `json:"cached"` // answered from the result cache, not run
	// Shared: not run either, but answered with the verdict of an identical
	// evaluation in flight when it came (one of its own batch, or another
	// request's); such a verdict may be one the cache would not keep.
	Shared bool `json:"shared"`
	// Source: for a cached or shared answer, the id of the job whose
	// evaluation ran (its eval_id in the log).
	Source      string  `json:"source,omitempty"`
	QueueWaitMS float64 `json:"queue_wait_ms"`
	ExecMS      float64 `json:"exec_ms"`
	// Lost: the item's job and result were lost and it was never logged
	// (settle.go); its verdict is harness_error with retry "lost".
	Lost bool `json:"lost,omitempty"`
	// FromLog: the stored result was lost and this one was read back from
	// the evaluation log (settle.go).
	FromLog bool `json:"from_log,omitempty"`
}

// LoggedAs is the eval_id j's evaluation is logged under: LogID, else ID.
func (j Job) LoggedAs() string {
	if j.LogID != "" {
		return j.LogID
	}
	return j.ID
}

// queued is Job without its JSON methods, for them to encode the fields.
type queued Job

// hashes are eval.Job's hashes as a queued job carries them: beside its
// fields, since the harness protocol, which encodes eval.Job, does not.
type hashes struct {
	TaskHash string `json:"task_hash,omitempty"`
	CodeHash string `json:"code_hash,omitempty"`
}

// MarshalJSON encodes j with its hashes.
func (j Job) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		queued
		hashes
	}{queued(j), hashes{j.TaskHash, j.CodeHash}})
}

// UnmarshalJSON decodes a queued job with its hashes; one queued by a
// version whose jobs carried none gets them made here.
func (j *Job) UnmarshalJSON(data []byte) error {
	var w struct {
		queued
		hashes
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("dispatch.Job: %w", err)
	}
	*j = Job(w.queued)
	j.TaskHash, j.CodeHash = w.hashes.TaskHash, w.hashes.CodeHash
	j.Hash()
	return nil
}
