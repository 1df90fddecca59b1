package rollout

import (
	"context"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Message is one chat message (role "system", "user" or "assistant").
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one LLM call.
type Request struct {
	Messages    []Message
	Temperature *float64 // nil: the client's default
	MaxTokens   int      // 0: the client's default
	// Purpose names the call for accounting and logs: "large", "small.revise",
	// "small.tune", "sample", "refine", "skill.extract", "skill.dedup".
	Purpose string
}

// Completion is one LLM answer with its cost.
type Completion struct {
	Text             string
	Model            string
	PromptTokens     int
	CompletionTokens int
	Latency          time.Duration
	FinishReason     string // "stop", "length", ...
	// CallID is the id the call was logged under (an llm_calls row), when a
	// logger wraps the LLM; the step that made the call lists it.
	CallID string
}

// LLM completes chat messages. rollout/llm implements it over any
// OpenAI-compatible endpoint; an error means no usable answer (after the
// client's own retries) and becomes a failed step, never a crash.
type LLM interface {
	Complete(ctx context.Context, req Request) (Completion, error)
}

// Evaluator judges a kernel: dispatch.Local (the result cache in front of a
// harness.Supervisor) in the CLI, the job queue in the gateway.
type Evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
}

// CachedEvaluator is an Evaluator with a result cache in front of it
// (dispatch's): the search evaluates through it when its evaluator is one,
// so a kernel already judged, by this search or by any other path, is
// answered from the cache instead of run again.
type CachedEvaluator interface {
	Evaluator
	// EvaluateCached judges job as Evaluate does; evalID is the id the step
	// logs the evaluation under, which the cache keeps for later answers.
	// source is "" when the job ran, else the eval_id of the evaluation
	// whose cached verdict answered it.
	EvaluateCached(ctx context.Context, evalID string, job eval.Job) (v eval.Verdict, source string, err error)
}

// Skill is one validity rule as a prompt sees it.
type Skill struct {
	ID        string `json:"id"`
	Version   int    `json:"version"`
	Rule      string `json:"rule"`      // one sentence, "You cannot ..."
	Signature string `json:"signature"` // the error signature it came from
	Hits      int    `json:"hits"`      // failures it explains
}

// Observation is one evaluated candidate, reported to the skill memory.
type Observation struct {
	SearchID string
	TaskID   string
	EvalID   string
	Code     string
	Verdict  eval.Verdict
	// Used are the skills that were in the prompt that produced Code;
	// Omitted those deliberately left out of it (the on/off comparison).
	Used    []string
	Omitted []string
}

// SkillMemory is what the search needs of rollout/skills.
type SkillMemory interface {
	// Retrieve returns the rules for a prompt: those whose signature matches
	// sig (a repair step's error), then the most-hit active rules, at most k.
	Retrieve(ctx context.Context, sig string, k int) ([]Skill, error)
	// Observe feeds extraction (repeated failures become rules), revocation
	// (a kernel that breaks a rule compiles and passes) and the on/off
	// comparison.
	Observe(ctx context.Context, o Observation) error
}
