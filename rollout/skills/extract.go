package skills

import (
	"context"
	"regexp"
	"strings"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout"
)

// Limits on what the extraction call may answer.
const (
	maxRuleLen    = 300
	maxPatternLen = 300
	maxDedupCands = 10
)

// extract asks the LLM for a rule explaining job's failures, checks it for
// duplicates and stores it, or, on an abstention (or an unusable answer),
// starts the signature's count again.
func (m *Memory) extract(ctx context.Context, job *pending) error {
	comp, err := m.llm.Complete(ctx, rollout.Request{Messages: extractPrompt(job), Purpose: "skill.extract", MaxTokens: 300})
	if err != nil {
		m.log.Warn("skill extraction failed", "signature", job.sig, "err", err)
	}
	rule, pattern, ok := parseExtract(comp.Text)
	if err != nil || !ok {
		if err == nil {
			m.log.Info("skill extraction abstained", "signature", job.sig, "answer", truncate(comp.Text, 200))
		}
		return m.change(ctx, func() error {
			delete(m.counts, job.sig) // ask again after another threshold's worth
			return nil
		})
	}
	if pattern != "" && !validPattern(pattern, job.codes[len(job.codes)-1]) {
		m.log.Info("skill pattern dropped", "signature", job.sig, "pattern", pattern)
		pattern = ""
	}
	dup := m.dedup(ctx, job.sig, rule)
	return m.change(ctx, func() error {
		p := m.counts[job.sig]
		delete(m.counts, job.sig)
		count := job.count
		if p != nil {
			count = p.count // failures that came in during the calls count too
			job.evalIDs = addExamples(job.evalIDs, p.evalIDs...)
		}
		now := m.cfg.Now().UTC()
		if r, ok := m.rules[dup]; ok && r.Active() {
			r.Hits += count
			r.Aliases = append(r.Aliases, job.sig)
			r.ExampleEvalIDs = addExamples(r.ExampleEvalIDs, job.evalIDs...)
			r.LastSeen = now
			return m.commitLocked(ctx, r, ReasonMerged)
		}
		r := Rule{
			ID: newID(), Rule: rule, Signature: job.sig, Pattern: pattern,
			FailingCode:    truncate(job.codes[len(job.codes)-1], maxFailingCode),
			ExampleEvalIDs: job.evalIDs, FirstSeen: job.firstSeen, LastSeen: now,
			Hits: count, Status: export.SkillActive, SourceSearchID: job.searchID,
		}
		setEnv(&r, job.env)
		return m.commitLocked(ctx, r, ReasonCreated)
	})
}

// dedup asks the LLM whether rule repeats an active rule of the same error
// class; it answers the duplicate's id, or "" for a new rule (also when
// there is nothing to compare with or the call fails).
func (m *Memory) dedup(ctx context.Context, sig, rule string) string {
	class := ErrorClass(sig)
	m.mu.Lock()
	var cands []Rule
	for _, id := range m.sortedIDs() {
		r := m.rules[id]
		if r.Active() && ErrorClass(r.Signature) == class {
			cands = append(cands, r)
		}
	}
	m.mu.Unlock()
	if len(cands) == 0 {
		return ""
	}
	if len(cands) > maxDedupCands {
		cands = cands[:maxDedupCands]
	}
	comp, err := m.llm.Complete(ctx, rollout.Request{Messages: dedupPrompt(sig, rule, cands), Purpose: "skill.dedup", MaxTokens: 20})
	if err != nil {
		m.log.Warn("skill dedup failed; keeping the rule as new", "signature", sig, "err", err)
		return ""
	}
	f := strings.Fields(comp.Text)
	if len(f) == 2 && strings.EqualFold(f[0], "DUPLICATE") {
		id := strings.Trim(f[1], ".`'\"")
		for _, c := range cands {
			if c.ID == id {
				return id
			}
		}
		m.log.Info("skill dedup named no candidate; keeping the rule as new", "answer", truncate(comp.Text, 100))
	}
	return ""
}

// parseExtract reads "You cannot ...\nPATTERN: <regexp>"; ok is false for
// ABSTAIN and for anything that is not such a sentence.
func parseExtract(text string) (rule, pattern string, ok bool) {
	var lines []string
	for _, ln := range strings.Split(strings.TrimSpace(text), "\n") {
		if ln = strings.TrimSpace(ln); ln != "" {
			lines = append(lines, ln)
		}
	}
	if len(lines) == 0 {
		return "", "", false
	}
	rule = lines[0]
	if !strings.HasPrefix(rule, "You cannot ") || len(rule) > maxRuleLen {
		return "", "", false // ABSTAIN lands here too
	}
	for _, ln := range lines[1:] {
		if p, found := strings.CutPrefix(ln, "PATTERN:"); found {
			pattern = strings.Trim(strings.TrimSpace(p), "`")
		}
	}
	return rule, pattern, true
}

// validPattern keeps a pattern only if it is a Go regexp of modest size that
// matches the failing example and not the empty string: a pattern that
// matches everything would retire its rule on the first correct kernel.
func validPattern(pattern, failing string) bool {
	if len(pattern) > maxPatternLen {
		return false
	}
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(failing) && !re.MatchString("") && !re.MatchString("\n")
}
