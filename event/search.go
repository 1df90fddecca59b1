package event

import (
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// SearchStep is what the search runner publishes on events.search_step,
// one per step (failed steps included). EventID is SearchStepID(search, seq),
// so a step published again after a restart is written once.
type SearchStep struct {
	EventID       string          `json:"event_id"`
	Time          time.Time       `json:"ts"`
	SearchID      string          `json:"search_id"`
	Seq           int             `json:"seq"`
	TaskID        string          `json:"task_id"`
	Node          int             `json:"node"`
	Parent        int             `json:"parent"`
	Action        string          `json:"action"`
	Policy        string          `json:"policy"`
	Prompt        []PromptMessage `json:"prompt"`
	PromptVersion string          `json:"prompt_version"`
	Completion    string          `json:"completion"`
	Code          string          `json:"code"`
	TokensIn      int             `json:"tokens_in"`
	TokensOut     int             `json:"tokens_out"`
	LatencyMS     float64         `json:"latency_ms"`
	EvalMS        float64         `json:"eval_ms"`
	StepMS        float64         `json:"step_ms"`
	Model         string          `json:"model"`
	EvalID        string          `json:"eval_id"`
	Verdict       *eval.Verdict   `json:"verdict,omitempty"`
	Reward        float64         `json:"reward"`
	BestSpeedup   *float64        `json:"best_speedup,omitempty"`
	BestNode      int             `json:"best_node"`
	SkillIDs      []string        `json:"skill_ids"`
	SkillVersions []int           `json:"skill_versions,omitempty"`
	CallIDs       []string        `json:"call_ids,omitempty"` // the step's LLM calls (llm_calls.call_id), in order
	Duplicate     bool            `json:"duplicate"`
	Error         string          `json:"error"`
	Failure       string          `json:"failure,omitempty"` // Error's kind (Failure*); "" for a step that made a node
}

// What a failed search step failed at (SearchStep.Failure). Only an answer
// failure is the model's: it answered, and the answer held no code or no
// edits that apply (a negative sample, scored as an invalid submission);
// the others are no judgement of the model.
const (
	FailureLLM      = "llm"             // the LLM call failed: no answer
	FailurePrompt   = "prompt"          // the prompt did not render
	FailureAnswer   = "answer"          // the answer held no usable code
	FailureEvaluate = "evaluate"        // the evaluator failed
	FailureTune     = "nothing_to_tune" // a tune found no launch parameter (no LLM call)
)

// SearchStepID is a step's event id.
func SearchStepID(searchID string, seq int) string { return fmt.Sprintf("%s.%d", searchID, seq) }

// Search is what the search runner publishes on events.search.
type Search struct {
	EventID  string    `json:"event_id"` // <search_id>.<state>.<steps>: one row per state reached
	Time     time.Time `json:"ts"`
	SearchID string    `json:"search_id"`
	TaskID   string    `json:"task_id"`
	State    string    `json:"state"`
	Error    string    `json:"error,omitempty"`
	Policy   string    `json:"policy"`
	Model    string    `json:"model"`
	Seed     int64     `json:"seed"`
	// The budget and the search's constants (rollout.Config).
	StepsBudget    int          `json:"steps_budget"`
	TokenBudget    int          `json:"token_budget"`
	C              float64      `json:"c"`
	ExpandRatio    float64      `json:"expand_ratio"`
	Alpha          float64      `json:"alpha"`
	PLarge         float64      `json:"p_large"`
	SmallStepLimit int          `json:"small_step_limit"`
	Pool           int          `json:"pool"`
	ContextRounds  int          `json:"context_rounds"`
	SkillK         int          `json:"skill_k"`
	SkillOmitRate  float64      `json:"skill_omit_rate"`
	Options        eval.Options `json:"options"`
	// Where it stands.
	Steps       int       `json:"steps"`
	TokensIn    int       `json:"tokens_in"`
	TokensOut   int       `json:"tokens_out"`
	BestNode    *int      `json:"best_node,omitempty"`
	BestEvalID  string    `json:"best_eval_id,omitempty"`
	BestSpeedup *float64  `json:"best_speedup,omitempty"`
	BestReward  *float64  `json:"best_reward,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// LLMCall is what the search runner publishes on events.llm_call.
type LLMCall struct {
	EventID          string          `json:"event_id"`
	Time             time.Time       `json:"ts"`
	CallID           string          `json:"call_id"`
	SearchID         string          `json:"search_id,omitempty"` // "" for the skill memory's calls
	StepSeq          int             `json:"step_seq,omitempty"`  // the search step it was made for; 0: none
	Purpose          string          `json:"purpose"`
	Model            string          `json:"model"`
	Messages         []PromptMessage `json:"messages"`
	Completion       *string         `json:"completion,omitempty"` // nil when the call failed
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	LatencyMS        float64         `json:"latency_ms"`
	FinishReason     string          `json:"finish_reason,omitempty"`
	Error            string          `json:"error,omitempty"`
}
