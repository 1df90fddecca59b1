package skills

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
)

// maxSnippets failing examples per signature go into the extraction prompt;
// at most maxPending signatures are counted at once (a long adapt phase
// meets many one-off errors; the oldest are forgotten first).
const (
	maxSnippets = 3
	maxPending  = 4096
)

// pending counts the failures with one signature that no active rule
// explains yet.
type pending struct {
	sig       string
	count     int
	evalIDs   []string
	codes     []string // the latest maxSnippets failing kernels
	feedback  []string // their feedback, index for index
	inflight  bool     // an extraction call is out for this signature
	firstSeen time.Time
	searchID  string
	env       eval.Env
}

// Observe takes one evaluated candidate: it feeds the on/off comparison,
// retires rules a passing kernel breaks, and counts failures, asking the LLM
// for a rule when a signature reaches the threshold. The LLM call happens in
// Observe (outside the memory's locks); callers that must not wait can run
// it in a goroutine. An LLM failure is logged and counts as an abstention;
// only store errors are returned.
func (m *Memory) Observe(ctx context.Context, o rollout.Observation) error {
	var job *pending
	err := m.change(ctx, func() error {
		v := o.Verdict
		if v.Env.Triton != "" {
			m.triton = v.Env.Triton
		}
		if v.Status == eval.StatusHarnessError || v.TaskError != "" {
			return nil // not the candidate's doing: no evidence either way
		}
		if err := m.onOffLocked(ctx, o); err != nil {
			return err
		}
		if v.Status == eval.StatusCorrect {
			return m.passedLocked(ctx, o)
		}
		if (v.Status != eval.StatusCompileError && v.Status != eval.StatusRuntimeError) || v.ErrorSignature == "" {
			return nil
		}
		var err error
		job, err = m.failedLocked(ctx, o, Normalise(v.ErrorSignature))
		return err
	})
	if err != nil || job == nil {
		return err
	}
	return m.extract(ctx, job)
}

// failedLocked records one failure: a hit of the rule that explains it, or
// one more count towards a new rule (returning a copy of the pending state
// when it is time to ask the LLM).
func (m *Memory) failedLocked(ctx context.Context, o rollout.Observation, sig string) (*pending, error) {
	now := m.cfg.Now().UTC()
	for _, id := range m.sortedIDs() {
		if r := m.rules[id]; r.Active() && r.covers(sig) {
			r.Hits++
			r.LastSeen = now
			r.ExampleEvalIDs = addExamples(r.ExampleEvalIDs, o.EvalID)
			setEnv(&r, o.Verdict.Env) // the toolchain of the latest evidence
			return nil, m.commitLocked(ctx, r, ReasonHit)
		}
	}
	p := m.counts[sig]
	if p == nil {
		m.evictLocked()
		p = &pending{sig: sig, firstSeen: now}
		m.counts[sig] = p
	}
	p.count++
	p.evalIDs = addExamples(p.evalIDs, o.EvalID)
	p.codes = append(p.codes, truncate(o.Code, maxFailingCode))
	p.feedback = append(p.feedback, o.Verdict.Feedback)
	if len(p.codes) > maxSnippets {
		p.codes = p.codes[1:]
		p.feedback = p.feedback[1:]
	}
	p.searchID, p.env = o.SearchID, o.Verdict.Env
	if p.count < m.cfg.Threshold || p.inflight {
		return nil, nil
	}
	p.inflight = true
	job := *p
	job.codes, job.feedback, job.evalIDs = slices.Clone(p.codes), slices.Clone(p.feedback), slices.Clone(p.evalIDs)
	return &job, nil
}

// passedLocked retires every active rule whose pattern the passing code
// matches: the rule said this could not work, and it just did.
func (m *Memory) passedLocked(ctx context.Context, o rollout.Observation) error {
	for _, id := range m.sortedIDs() {
		r := m.rules[id]
		if !r.Active() || r.Pattern == "" {
			continue
		}
		re, err := m.patternLocked(r.Pattern)
		if err != nil || !re.MatchString(o.Code) {
			continue
		}
		detail := fmt.Sprintf("passed: eval %s (task %s, search %s) matches the rule's pattern and is correct",
			o.EvalID, o.TaskID, o.SearchID)
		if err := m.retireLocked(ctx, r, ReasonRetiredPassed, detail); err != nil {
			return err
		}
	}
	return nil
}

// patternLocked compiles a rule's pattern once.
func (m *Memory) patternLocked(p string) (*regexp.Regexp, error) {
	if re, ok := m.patterns[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err == nil {
		m.patterns[p] = re
	}
	return re, err
}

// evictLocked makes room for one more counted signature.
func (m *Memory) evictLocked() {
	if len(m.counts) < maxPending {
		return
	}
	var oldest *pending
	for _, p := range m.counts {
		if !p.inflight && (oldest == nil || p.firstSeen.Before(oldest.firstSeen)) {
			oldest = p
		}
	}
	if oldest != nil {
		delete(m.counts, oldest.sig)
	}
}

func (m *Memory) sortedIDs() []string {
	ids := make([]string, 0, len(m.rules))
	for id := range m.rules {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func setEnv(r *Rule, env eval.Env) {
	if env.Torch != "" || env.Triton != "" || env.GPUName != "" {
		r.Torch, r.Triton, r.GPUArch = env.Torch, env.Triton, env.GPUName
	}
}
