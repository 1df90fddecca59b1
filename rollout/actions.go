package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/tasks"
)

// proposal is what an action produced before evaluation: code, or a reason
// why there is none (err), with what it cost.
type proposal struct {
	action, version  string
	prompt           []Message
	completion, code string
	// source is the answer code was read from, finish its call's finish
	// reason; source is "" when code came from edits or a mutation.
	source, finish      string
	tokensIn, tokensOut int
	latency             time.Duration
	model               string
	used, omitted       []string
	usedVersions        []int    // the version of each used rule, as retrieved
	callIDs             []string // the logged LLM calls made, in order
	err                 string
	failure             string // err's kind (event.Failure*)
}

// fail records why p has no code: err, of kind failure.
func (p *proposal) fail(failure, err string) { p.failure, p.err = failure, err }

// call makes one LLM call and adds its cost to p; it returns false when the
// call failed (p.err says why).
func (s *search) call(ctx context.Context, p *proposal, purpose, text string) (string, bool) {
	msgs := []Message{{Role: "user", Content: text}}
	p.prompt = msgs
	c, err := s.deps.LLM.Complete(ctx, Request{Messages: msgs, Purpose: purpose})
	if c.CallID != "" { // a failed call is a row too
		p.callIDs = append(p.callIDs, c.CallID)
	}
	p.tokensIn += c.PromptTokens
	p.tokensOut += c.CompletionTokens
	p.latency += c.Latency
	if c.Model != "" {
		p.model = c.Model
	}
	if err != nil {
		p.fail(event.FailureLLM, fmt.Sprintf("%s: llm: %v", purpose, err))
		return "", false
	}
	p.completion, p.finish = c.Text, c.FinishReason
	return c.Text, true
}

// data is the prompt data every call shares: task, GPU and skills.
func (s *search) data(ctx context.Context, p *proposal, parent int) promptData {
	sig := ""
	if v := s.tree.nodes[parent].Verdict; v != nil && !v.Correct {
		sig = v.ErrorSignature // a repair step: rules about this error first
	}
	task := tasks.Prompt(s.cfg.TaskSource)
	d := promptData{Task: task, TaskBody: taskBody(task), GPU: s.cfg.GPUName}
	d.Skills, p.used, p.usedVersions, p.omitted = s.skills(ctx, sig)
	return d
}

// propose runs one LLM action on parent: large, sample, refine or small.
func (s *search) propose(ctx context.Context, parent int, action string) proposal {
	p := proposal{action: action, version: promptVersion(action)}
	d := s.data(ctx, &p, parent)
	switch action {
	case ActionLarge:
		for _, n := range s.tree.pool(s.cfg.Pool) {
			d.Pool = append(d.Pool, itemOf(n))
		}
	case ActionRefine:
		for _, n := range s.tree.chain(parent, s.cfg.ContextRounds, false) {
			d.Chain = append(d.Chain, itemOf(n))
		}
	case ActionSmall:
		return s.small(ctx, p, d, parent)
	}
	text, err := render(action, d)
	if err != nil {
		p.fail(event.FailurePrompt, err.Error())
		return p
	}
	answer, ok := s.call(ctx, &p, action, text)
	if !ok {
		return p
	}
	if p.code, ok = s.deps.Extract.Code(answer); !ok {
		p.fail(event.FailureAnswer, action+": no code in the answer")
	}
	p.source = answer
	return p
}

// small is the small step: a reviser writes guidance from the chain since
// the last large step, then a tuner answers with exact-match edits of the
// parent's code. The step logs the tuner's prompt (it contains the
// guidance) and the cost of both calls.
func (s *search) small(ctx context.Context, p proposal, d promptData, parent int) proposal {
	p.version = promptVersion("revise", "tune")
	for _, n := range s.tree.chain(parent, s.cfg.ContextRounds, true) {
		d.Chain = append(d.Chain, itemOf(n))
	}
	text, err := render("revise", d)
	if err != nil {
		p.fail(event.FailurePrompt, err.Error())
		return p
	}
	guidance, ok := s.call(ctx, &p, "small.revise", text)
	if !ok {
		return p
	}
	d.Chain, d.Code, d.Guidance = nil, s.tree.nodes[parent].Code, strings.TrimSpace(guidance)
	if text, err = render("tune", d); err != nil {
		p.fail(event.FailurePrompt, err.Error())
		return p
	}
	answer, ok := s.call(ctx, &p, "small.tune", text)
	if !ok {
		return p
	}
	edits, err := s.deps.Extract.Edits(answer)
	if err == nil && len(edits) == 0 {
		// A tuner that rewrote the whole file instead is taken at its word.
		if code, ok := s.deps.Extract.Code(answer); ok {
			p.code, p.source = code, answer
			return p
		}
		err = errors.New("no edits in the answer")
	}
	if err == nil {
		p.code, err = s.deps.Extract.Apply(d.Code, edits)
	}
	if err != nil {
		p.fail(event.FailureAnswer, "small.tune: "+err.Error())
	}
	return p
}

// tune is the token-free action: one or two launch parameters of parent's
// (correct) code moved to a neighbouring value.
func (s *search) tune(parent int) (proposal, bool) {
	code, what, ok := tuneCode(s.tree.nodes[parent].Code, s.rng)
	p := proposal{action: ActionTune, code: code, model: ActionTune, completion: strings.Join(what, "; ")}
	return p, ok
}

// skills retrieves up to SkillK rules for sig and leaves each out with
// probability SkillOmitRate (the on/off comparison). A failing memory is
// logged, never fatal: the prompt just has no rules.
func (s *search) skills(ctx context.Context, sig string) (rules, used []string, versions []int, omitted []string) {
	if s.deps.Skills == nil || s.cfg.SkillK == 0 {
		return nil, nil, nil, nil
	}
	got, err := s.deps.Skills.Retrieve(ctx, sig, s.cfg.SkillK)
	if err != nil {
		s.log.Warn("skills retrieve failed", "err", err)
		return nil, nil, nil, nil
	}
	for _, sk := range got {
		if s.rng.Float64() < s.cfg.SkillOmitRate {
			omitted = append(omitted, sk.ID)
			continue
		}
		rules = append(rules, sk.Rule)
		used, versions = append(used, sk.ID), append(versions, sk.Version)
	}
	return rules, used, versions, omitted
}
