package event

import (
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Evaluation is what dispatch.PublishResult logs on events.evaluation, one
// per verdict (cached and shared answers included), and what a search logs
// for each step it evaluated. EventID is also the bus message id.
type Evaluation struct {
	EventID    string    `json:"event_id"`
	Time       time.Time `json:"ts"`
	EvalID     string    `json:"eval_id"`
	BatchID    string    `json:"batch_id,omitempty"`
	RequestID  string    `json:"request_id,omitempty"`
	ClientID   string    `json:"client_id,omitempty"` // API key id
	TaskID     string    `json:"task_id,omitempty"`
	TaskSource string    `json:"task_source,omitempty"` // the reference judged against: exports rebuild the prompt from it
	Code       string    `json:"code"`
	Completion *string   `json:"completion,omitempty"` // raw LLM text, when code was extracted from it
	// Prompt is what the model was asked, when the caller said (a trainer's
	// prompt, an episode's observation, a search step's messages).
	Prompt   []PromptMessage `json:"prompt,omitempty"`
	RewardFn string          `json:"reward_fn,omitempty"`
	Reward   *float64        `json:"reward,omitempty"`
	Cached   bool            `json:"cached,omitempty"` // answered from the result cache
	// Valid is the reward function's valid, as the API answered it: false
	// when the verdict says nothing of the candidate (a deadline stop, a
	// broken reference) and the sample is to be dropped. nil: the publisher
	// did not say (the log judges the verdict by RewardFn, as the API does).
	Valid *bool `json:"valid,omitempty"`
	// SourceEvalID: for a cached or shared answer, the evaluation that ran.
	SourceEvalID string `json:"source_eval_id,omitempty"`
	// Options are the harness options the verdict was made under.
	Options *eval.Options `json:"options,omitempty"`
	// QueueWaitMS and ExecMS are the two deadlines' measures; nil when the
	// answer came from the cache.
	QueueWaitMS *float64     `json:"queue_wait_ms,omitempty"`
	ExecMS      *float64     `json:"exec_ms,omitempty"`
	Verdict     eval.Verdict `json:"verdict"`
}

// EpisodeStep is what the gateway publishes on events.episode_step,
// one per POST /v1/episodes/{id}/step.
type EpisodeStep struct {
	EventID   string    `json:"event_id"`
	Time      time.Time `json:"ts"`
	EpisodeID string    `json:"episode_id"`
	Turn      int       `json:"turn"`
	ClientID  string    `json:"client_id,omitempty"`
	TaskID    string    `json:"task_id"`
	// Prompt is the conversation the completion answered: the task prompt,
	// then each earlier turn's completion and feedback.
	Prompt      []PromptMessage `json:"prompt,omitempty"`
	Completion  string          `json:"completion"`
	Observation string          `json:"observation"`
	Reward      float64         `json:"reward"`
	Done        bool            `json:"done"`
	DoneReason  string          `json:"done_reason,omitempty"` // solved, max_turns, task_error; "" while running
	MaxTurns    int             `json:"max_turns,omitempty"`
	EvalID      string          `json:"eval_id,omitempty"`
	Status      string          `json:"status,omitempty"`
	Speedup     *float64        `json:"speedup,omitempty"`
}
