package rollout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/reward"
	"github.com/kernelgate/kernelgate/tasks"
)

// maxLLMErrors LLM calls failing in a row (after the client's own retries)
// stop the search as failed: an unreachable endpoint or a 401 will not heal
// by itself, and the rest of the step budget would only log the same error.
const maxLLMErrors = 5

// search is one running search. It runs on the caller's goroutine: one
// step at a time, so a seeded search is reproducible.
type search struct {
	cfg       Config
	task      eval.Task // the search's task, and its hash: made once, carried by every job
	taskHash  string
	deps      Deps
	log       *slog.Logger
	rng       *rand.Rand
	tree      *tree
	steps     int
	tokensIn  int
	tokensOut int
	actions   map[string]int
	latest    int          // the newest node: the refine policy's chain end
	untunable map[int]bool // nodes a tune found nothing to change in
	llmErrors int          // LLM failures in a row
	stepStart time.Time    // when the current step began planning
}

// Run runs a search until its step or token budget is spent, ctx is
// cancelled (in-flight LLM calls and evaluations are cancelled with it), or
// the LLM keeps failing. Failed steps are reported through OnStep and the
// search goes on; the error is only for a bad config or resume log.
func Run(ctx context.Context, cfg Config, deps Deps) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if deps.LLM == nil || deps.Eval == nil || deps.Extract == nil {
		return Result{}, errors.New("rollout.Run: LLM, Eval and Extract are required")
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &search{
		cfg: cfg, deps: deps, tree: newTree(), actions: map[string]int{}, untunable: map[int]bool{},
		log:  log.With("component", "rollout", "search_id", cfg.SearchID, "policy", cfg.Policy),
		task: tasks.HarnessTask(cfg.TaskID, cfg.TaskSource), taskHash: eval.HashSource(cfg.TaskSource),
	}
	if err := s.replay(cfg.Resume); err != nil {
		return Result{}, err
	}
	// Seed + resumed steps: a resumed search does not replay the random
	// draws of the steps it skipped, yet stays reproducible.
	seed := uint64(cfg.Seed + int64(len(cfg.Resume)))
	s.rng = rand.New(rand.NewPCG(seed, 0x6b67617465))
	status := s.loop(ctx)
	s.log.Info("search finished", "status", status, "steps", s.steps, "nodes", len(s.tree.nodes)-1,
		"tokens_in", s.tokensIn, "tokens_out", s.tokensOut)
	return s.result(status), nil
}

func (s *search) loop(ctx context.Context) string {
	for {
		switch {
		case ctx.Err() != nil:
			return StatusCancelled
		case s.llmErrors >= maxLLMErrors:
			return StatusFailed
		case s.steps >= s.cfg.Steps && len(s.tree.nodes) == 1 && s.llmErrors > 0:
			return StatusFailed // the budget went on LLM errors: nothing was ever proposed
		case s.steps >= s.cfg.Steps:
			return StatusDone
		case s.cfg.TokenBudget > 0 && s.tokensIn+s.tokensOut >= s.cfg.TokenBudget:
			return StatusBudget
		}
		s.stepStart = time.Now()
		parent, action := s.plan()
		var p proposal
		if action == ActionTune {
			var ok bool
			if p, ok = s.tune(parent); !ok {
				s.untunable[parent] = true
				s.log.Info("tune skipped: nothing tunable", "node", parent)
				s.record(Step{Parent: parent, Action: ActionTune, Model: ActionTune, Error: errNothingToTune, Failure: event.FailureTune})
				action = ActionSmall
			}
		}
		if action != ActionTune {
			p = s.propose(ctx, parent, action)
		}
		if ctx.Err() != nil {
			return StatusCancelled // the step was cut short: nothing to log
		}
		s.finish(ctx, parent, p)
	}
}

// plan picks the node to expand and the action, by policy.
func (s *search) plan() (int, string) {
	switch s.cfg.Policy {
	case PolicyRefine:
		if s.latest == 0 {
			return 0, ActionSample
		}
		return s.latest, ActionRefine
	case PolicySample:
		return 0, ActionSample
	}
	id := s.selectNode()
	return id, chooseAction(s.tree, id, s.cfg, s.rng, s.untunable)
}

// finish evaluates a proposal's code, adds the node and records the step.
func (s *search) finish(ctx context.Context, parent int, p proposal) {
	st := Step{
		Parent: parent, Action: p.action, Prompt: p.prompt, PromptVersion: p.version,
		Completion: p.completion, Code: p.code, TokensIn: p.tokensIn, TokensOut: p.tokensOut,
		LatencyMS: float64(p.latency) / float64(time.Millisecond), Model: p.model,
		SkillIDs: p.used, SkillVersions: p.usedVersions, CallIDs: p.callIDs, Error: p.err, Failure: p.failure,
	}
	if p.action == ActionTune {
		st.PromptVersion = "" // no prompt: the mutation is in Completion
	}
	if p.failure == event.FailureLLM {
		s.llmErrors++
	} else {
		s.llmErrors = 0
	}
	if st.Error != "" {
		s.record(st)
		return
	}
	id := len(s.tree.nodes)
	st.EvalID = fmt.Sprintf("%s-%d", s.cfg.SearchID, id)
	job := eval.Job{Task: s.task, Code: p.code, Options: s.cfg.Options, TaskHash: s.taskHash}
	job.Hash() // the code's; both carried to the evaluator and, through it, to the verdict
	t0 := time.Now()
	v, source, err := s.evaluate(ctx, st.EvalID, job)
	st.EvalMS, st.Cached, st.SourceEvalID = ms(time.Since(t0)), source != "", source
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		st.Error, st.Failure = "evaluate: "+err.Error(), event.FailureEvaluate
		s.record(st)
		return
	}
	if v.CodeHash == "" {
		v.CodeHash = job.CodeHash // the duplicate check needs it
	}
	if p.source != "" {
		// Worded as the gateway words a completion's verdict: a cut-off
		// answer is invalid_submission (truncated), scored as a compile error.
		v = s.deps.Extract.Verdict(p.source, p.finish, v)
	}
	// reward.AdaExplore is DESIGN.md's reward. On the CPU interpreter (no
	// timing) a correct kernel has no speedup; it is scored as 1.0x.
	r := reward.AdaExplore(v).Reward
	n := s.tree.add(parent, p.action, p.code, p.model, st.EvalID, v, r)
	st.Node, st.Verdict, st.Reward, st.Duplicate = n.ID, n.Verdict, r, n.Duplicate
	s.record(st)
	if s.deps.Skills != nil {
		o := Observation{SearchID: s.cfg.SearchID, TaskID: s.cfg.TaskID, EvalID: st.EvalID,
			Code: p.code, Verdict: v, Used: p.used, Omitted: p.omitted}
		if err := s.deps.Skills.Observe(ctx, o); err != nil && ctx.Err() == nil {
			s.log.Warn("skills observe failed", "node", n.ID, "err", err)
		}
	}
}

// evaluate judges job through the result cache when the evaluator has one;
// source is the cached verdict's evaluation ("" when job ran).
func (s *search) evaluate(ctx context.Context, evalID string, job eval.Job) (eval.Verdict, string, error) {
	if c, ok := s.deps.Eval.(CachedEvaluator); ok {
		return c.EvaluateCached(ctx, evalID, job)
	}
	v, err := s.deps.Eval.Evaluate(ctx, job)
	return v, "", err
}

// record completes a step, counts it and hands it to OnStep.
func (s *search) record(st Step) {
	st.SearchID, st.Policy, st.Time = s.cfg.SearchID, s.cfg.Policy, time.Now()
	if !s.stepStart.IsZero() {
		st.StepMS = ms(st.Time.Sub(s.stepStart))
	}
	st.BestNode, st.BestSpeedup = s.bestSoFar()
	s.count(st)
	s.log.Info("step", "node", st.Node, "parent", st.Parent, "action", st.Action,
		"prompt_version", st.PromptVersion, "reward", st.Reward, "duplicate", st.Duplicate,
		"tokens_in", st.TokensIn, "tokens_out", st.TokensOut, "llm_ms", st.LatencyMS, "eval_ms", st.EvalMS,
		"step_ms", st.StepMS, "error", st.Error)
	if s.deps.OnStep != nil {
		s.deps.OnStep(st)
	}
}

// count adds a step to the budgets and counters (a live step or a resumed one).
func (s *search) count(st Step) {
	s.tokensIn += st.TokensIn
	s.tokensOut += st.TokensOut
	if st.countsTowardSteps() {
		s.steps++
		s.actions[st.Action]++
	}
	if st.Node > 0 {
		s.latest = st.Node
	}
}

func (s *search) bestSoFar() (int, *float64) {
	b := s.tree.best
	if b == 0 {
		return 0, nil
	}
	v := s.tree.nodes[b].Verdict
	if !v.Correct || v.Speedup == nil {
		return b, nil
	}
	sp := *v.Speedup
	return b, &sp
}

func (s *search) result(status string) Result {
	r := Result{Status: status, Steps: s.steps, TokensIn: s.tokensIn, TokensOut: s.tokensOut, Actions: map[string]int{}}
	for k, v := range s.actions {
		r.Actions[k] = v
	}
	for _, n := range s.tree.nodes[1:] {
		c := *n
		c.Children = append([]int(nil), n.Children...)
		r.Nodes = append(r.Nodes, c)
	}
	if s.tree.best != 0 {
		b := r.Nodes[s.tree.best-1]
		r.Best = &b
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
