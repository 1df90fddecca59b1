package rollout

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/kernelgate/kernelgate/eval"
)

// Policies: the search itself and the two baselines the AdaExplore paper
// compares it with, run by the same engine so that users can compare them.
const (
	PolicyAdaExplore = "adaexplore"
	PolicyRefine     = "refine" // one chain: each step rewrites the latest kernel
	PolicySample     = "sample" // independent samples from the task prompt
)

// Config is one search. DefaultConfig holds the defaults of DESIGN.md (the
// released AdaExplore configs); callers fill the task and the budgets.
type Config struct {
	SearchID, TaskID, TaskSource, GPUName string
	Policy                                string
	// Steps bounds the steps (LLM proposals and evaluations, failed ones
	// included, so that a dead endpoint cannot loop forever); TokenBudget
	// (0: none) stops the search once prompt+completion tokens reach it.
	Steps, TokenBudget int
	Seed               int64
	// C is UCB's exploration constant; ExpandRatio scales the expand arm
	// (select.go); Alpha mixes a node's mean (0) and max (1) reward; PLarge
	// is the chance of a large step where a small one was due.
	C, ExpandRatio, Alpha, PLarge float64
	// SmallStepLimit small steps without improvement make a node stagnate;
	// Pool bounds the kernels a large step sees; ContextRounds the nodes of
	// the chain a reviser sees.
	SmallStepLimit, Pool, ContextRounds int
	// SkillK rules at most per prompt; each is left out with probability
	// SkillOmitRate (the on/off comparison of rollout/skills).
	SkillK        int
	SkillOmitRate float64
	Options       eval.Options
	// Resume holds the steps of an earlier run of this search, in order: the
	// tree is rebuilt from them without calling the LLM or the evaluator.
	Resume []Step
}

// DefaultConfig returns DESIGN.md's defaults with the adaexplore policy.
func DefaultConfig() Config {
	return Config{
		Policy:         PolicyAdaExplore,
		Steps:          20,
		C:              0.3,
		ExpandRatio:    1.0,
		Alpha:          0,
		PLarge:         0.2,
		SmallStepLimit: 2,
		Pool:           5,
		ContextRounds:  5,
		SkillK:         5,
		SkillOmitRate:  0.1,
		Options:        eval.DefaultOptions(),
	}
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.SearchID != "", "search id is empty")
	check(c.TaskID != "", "task id is empty")
	check(c.TaskSource != "", "task source is empty")
	check(c.Policy == PolicyAdaExplore || c.Policy == PolicyRefine || c.Policy == PolicySample,
		"policy must be adaexplore, refine or sample, got %q", c.Policy)
	check(c.Steps >= 1, "steps must be >= 1, got %d", c.Steps)
	check(c.TokenBudget >= 0, "token budget must be >= 0, got %d", c.TokenBudget)
	check(c.C >= 0, "c must be >= 0, got %v", c.C)
	check(c.ExpandRatio > 0, "expand ratio must be > 0, got %v", c.ExpandRatio)
	check(c.Alpha >= 0 && c.Alpha <= 1, "alpha must be in 0..1, got %v", c.Alpha)
	check(c.PLarge >= 0 && c.PLarge <= 1, "p_large must be in 0..1, got %v", c.PLarge)
	check(c.SmallStepLimit >= 1, "small-step limit must be >= 1, got %d", c.SmallStepLimit)
	check(c.Pool >= 1, "pool must be >= 1, got %d", c.Pool)
	check(c.ContextRounds >= 1, "context rounds must be >= 1, got %d", c.ContextRounds)
	check(c.SkillK >= 0, "skill k must be >= 0, got %d", c.SkillK)
	check(c.SkillOmitRate >= 0 && c.SkillOmitRate <= 1, "skill omit rate must be in 0..1, got %v", c.SkillOmitRate)
	if err := c.Options.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rollout.Config: %w", err)
	}
	return nil
}

// Edit is one exact-match search/replace edit of a small step's tuner.
type Edit struct {
	Search, Replace string
}

// Extractor reads code and edits out of completions. cmd wires it to
// rollout/llm, which the engine does not import (the parts import the root
// package, never the reverse).
type Extractor interface {
	// Code returns the kernel source in text (a fenced block), false if none.
	Code(text string) (string, bool)
	// Verdict is the answer to text, whose code (Code's) the harness judged
	// v, given the finish reason of the call that wrote it: the gateway's
	// wording of a completion's verdict, so that a cut-off answer scores
	// like a compile error, never as a hack.
	Verdict(text, finishReason string, v eval.Verdict) eval.Verdict
	// Edits returns the search/replace edits in text.
	Edits(text string) ([]Edit, error)
	// Apply applies edits to code; an edit whose search text is not found
	// exactly is an error.
	Apply(code string, edits []Edit) (string, error)
}

// Deps are what a search talks to. Skills, OnStep and Log may be nil.
type Deps struct {
	LLM     LLM
	Eval    Evaluator
	Skills  SkillMemory
	Extract Extractor
	OnStep  func(Step)
	Log     *slog.Logger
}

// Search statuses.
const (
	StatusDone      = "done"      // the step budget is spent
	StatusBudget    = "budget"    // the token budget is spent
	StatusCancelled = "cancelled" // the context was cancelled
	StatusFailed    = "failed"    // the LLM failed too many times in a row
)

// Result is a finished (or stopped) search.
type Result struct {
	Status              string
	Steps               int
	TokensIn, TokensOut int
	Best                *Node // nil when no node was evaluated
	Actions             map[string]int
	Nodes               []Node // in id order, without the virtual root
}
