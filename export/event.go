package export

import (
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// SchemaVersion is the version (MAJOR.MINOR) of the tables written here.
// It is stored in every file's key/value metadata under MetaSchemaVersion.
// Within a major version columns are only added.
//
// Changelog: 1.0 (2026-11-29) first version; 1.1 (2026-11-30) evaluations gains
// task_source (exports rebuild prompts from it), and the skills table is defined;
// 1.2 (2026-11-30) the search_steps table, and skills rows carry event_id;
// 1.3 (2026-12-01) evaluations' stage_ms (a MAP, which Hugging Face datasets
// cannot load) becomes stage_times, a list of (stage, ms) structs;
// evaluations and episode_steps gain prompt (the chat messages the completion
// answered), episode_steps done_reason (null while running) and max_turns;
// evaluations gain source_eval_id (the run a cached or shared answer came
// from) and options (the harness options, a struct); search_steps' node,
// eval_id and status are null, not 0 and "", for a step that made no node;
// the searches table (configuration, seed, budget, state, outcome) and the
// llm_calls table (every LLM call, its purpose, messages and cost); skills
// rows gain reason, pattern, aliases and the on/off counts (and keep up to 32
// example eval ids, not 5); search_steps gain skill_versions;
// 1.4 (2026-12-01) evaluations gain reference_shared.
const SchemaVersion = "1.4"

// Key/value metadata keys of every file the sink writes.
const (
	MetaSchemaVersion = "kernelgate.schema_version"
	MetaTable         = "kernelgate.table"
	MetaWriter        = "kernelgate.writer_id"
)

// Event subjects the sink understands (on the EVENTS stream).
const (
	SubjectEvaluation  = "events.evaluation"
	SubjectEpisodeStep = "events.episode_step"
)

// Table names (the table=<name> partition).
const (
	TableEvaluations  = "evaluations"
	TableEpisodeSteps = "episode_steps"
	TableRejected     = "rejected"
	TableSkills       = "skills" // skills.go: written by the skill library, not the sink
)

// EvaluationEvent is what the gateway publishes on events.evaluation, one
// per verdict (cached answers included). EventID is also the bus message id.
type EvaluationEvent struct {
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

// EpisodeStepEvent is what the gateway publishes on events.episode_step,
// one per POST /v1/episodes/{id}/step.
type EpisodeStepEvent struct {
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
