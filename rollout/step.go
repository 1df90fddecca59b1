package rollout

import (
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Step is one step of a search, as the lead logs it (Parquet search_steps,
// SSE). A step with a non-empty Error failed (LLM error, no code in the
// answer, edits that do not match, nothing to tune, evaluation error; its
// Failure says which kind): it made no node (Node 0) and the search went on. Parent is the node the step
// expanded (0: the virtual root, the task without code).
type Step struct {
	SearchID      string    `json:"search_id"`
	Node          int       `json:"node"` // 0 for a failed step (no node was made)
	Parent        int       `json:"parent"`
	Action        string    `json:"action"`
	Policy        string    `json:"policy"`
	Prompt        []Message `json:"prompt"`
	PromptVersion string    `json:"prompt_version"`
	Completion    string    `json:"completion"`
	Code          string    `json:"code"`
	TokensIn      int       `json:"tokens_in"`
	TokensOut     int       `json:"tokens_out"`
	LatencyMS     float64   `json:"latency_ms"` // the LLM calls'
	// EvalMS is the evaluator's call (harness time); StepMS the step from
	// planning to its record, so StepMS - LatencyMS - EvalMS is the search's
	// own overhead. A step resumed from a log keeps its logged figures.
	EvalMS  float64       `json:"eval_ms"`
	StepMS  float64       `json:"step_ms"`
	Model   string        `json:"model"`
	EvalID  string        `json:"eval_id"`
	Verdict *eval.Verdict `json:"verdict"`
	// Cached: the verdict came from the result cache (nothing ran);
	// SourceEvalID is then the evaluation that made it.
	Cached       bool     `json:"cached"`
	SourceEvalID string   `json:"source_eval_id,omitempty"`
	Reward       float64  `json:"reward"`
	BestSpeedup  *float64 `json:"best_speedup"`
	BestNode     int      `json:"best_node"`
	SkillIDs     []string `json:"skill_ids"`
	// SkillVersions[i] is the version of SkillIDs[i] the prompt held.
	SkillVersions []int `json:"skill_versions,omitempty"`
	// CallIDs are the logged LLM calls the step made, in order (a small
	// step's reviser, then its tuner; a failed call included): the llm_calls
	// rows that name this step.
	CallIDs   []string `json:"call_ids,omitempty"`
	Duplicate bool     `json:"duplicate"`
	Error     string   `json:"error"`
	// Failure is Error's kind (event.Failure*: llm, prompt, answer,
	// evaluate, nothing_to_tune); "" for a step that made a node.
	Failure string    `json:"failure,omitempty"`
	Time    time.Time `json:"ts"`
}

// Actions.
const (
	ActionLarge  = "large"  // a full new kernel from the task and a diverse pool
	ActionSmall  = "small"  // reviser guidance, then tuner edits of the parent
	ActionTune   = "tune"   // token-free: launch parameters of a correct kernel
	ActionSample = "sample" // an independent sample from the task prompt
	ActionRefine = "refine" // a full rewrite of the latest kernel given its feedback
)

// countsTowardSteps: a skipped tune costs nothing (no tokens, no
// evaluation), so it does not use up a step; the small step run in its
// place does.
func (s Step) countsTowardSteps() bool {
	return !(s.Action == ActionTune && s.Node == 0 && s.Error == errNothingToTune)
}

const errNothingToTune = "tune: no tunable launch parameter (skipped; a small step runs instead)"
