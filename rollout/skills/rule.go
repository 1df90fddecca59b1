package skills

import (
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout"
)

// Change reasons, passed to Config.OnChange with each new rule version.
const (
	ReasonCreated       = "created"
	ReasonHit           = "hit"
	ReasonMerged        = "merged"
	ReasonRetiredManual = "retired:manual"
	ReasonRetiredPassed = "retired:passed"
	ReasonRetiredOnOff  = "retired:onoff"
)

// Limits on what a rule carries (provenance, not a log of every failure).
const (
	// The failing evaluations a version keeps as evidence: enough to study a
	// rule's failures, few enough that a skills row stays small.
	maxExampleIDs  = 32
	maxFailingCode = 4 << 10
)

// Rule is one version of a validity rule with its provenance. Every change
// (a hit, a merge, a retirement) is a new version with the same ID.
type Rule struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
	Rule    string `json:"rule"` // one sentence, "You cannot ..."
	// Signature is the normalised error signature the rule came from;
	// Aliases are the signatures of rules merged into it by the LLM
	// duplicate check (a failure with any of them is a hit).
	Signature string   `json:"signature"`
	Aliases   []string `json:"aliases,omitempty"`
	// Pattern is an optional Go regexp matching code that breaks the rule;
	// a correct kernel it matches retires the rule.
	Pattern        string   `json:"pattern,omitempty"`
	FailingCode    string   `json:"failing_code"`     // one example, at most 4 KiB
	ExampleEvalIDs []string `json:"example_eval_ids"` // the first maxExampleIDs
	// Torch, Triton and GPUArch are the toolchain of the latest evidence
	// (the creating failures, then each hit): retrieval ranks rules by it.
	Torch          string    `json:"torch"`
	Triton         string    `json:"triton"`
	GPUArch        string    `json:"gpu_arch"`
	FirstSeen      time.Time `json:"first_seen"`
	LastSeen       time.Time `json:"last_seen"`
	Hits           int       `json:"hits"`
	Status         string    `json:"status"` // export.SkillActive or export.SkillRetired
	RetiredReason  string    `json:"retired_reason,omitempty"`
	SourceSearchID string    `json:"source_search_id"`
	// OnOff is the on/off comparison as of this version (counts between
	// versions live in memory only, so a restart loses at most those).
	OnOff OnOff `json:"on_off"`
}

// OnOff counts evaluations whose prompt held the rule (Used) or left it out
// on purpose (Omitted), and how many of each compiled and passed.
type OnOff struct {
	Used        int `json:"used"`
	UsedPass    int `json:"used_pass"`
	Omitted     int `json:"omitted"`
	OmittedPass int `json:"omitted_pass"`
}

// Active reports whether the rule is in force.
func (r Rule) Active() bool { return r.Status == export.SkillActive }

// covers reports whether a failure with normalised signature sig is one the
// rule explains.
func (r Rule) covers(sig string) bool {
	return r.Signature == sig || slices.Contains(r.Aliases, sig)
}

// clone copies the slices so versions never share backing arrays.
func (r Rule) clone() Rule {
	r.Aliases = slices.Clone(r.Aliases)
	r.ExampleEvalIDs = slices.Clone(r.ExampleEvalIDs)
	return r
}

// Skill is the rule as a prompt sees it.
func (r Rule) Skill() rollout.Skill {
	return rollout.Skill{ID: r.ID, Version: r.Version, Rule: r.Rule, Signature: r.Signature, Hits: r.Hits}
}

// Row is the rule version as a row of the skills table.
func (r Rule) Row() export.Skill {
	return export.Skill{
		EventID:        export.SkillEventID(r.ID, int64(r.Version)),
		SkillID:        r.ID,
		Version:        int64(r.Version),
		Rule:           r.Rule,
		ErrorSignature: r.Signature,
		FailingCode:    r.FailingCode,
		ExampleEvalIDs: slices.Clone(r.ExampleEvalIDs),
		Torch:          optional(r.Torch),
		Triton:         optional(r.Triton),
		GPUArch:        optional(r.GPUArch),
		FirstSeen:      r.FirstSeen,
		LastSeen:       r.LastSeen,
		Hits:           int64(r.Hits),
		Status:         r.Status,
		RetiredReason:  optional(r.RetiredReason),
		SourceSearchID: optional(r.SourceSearchID),
		Pattern:        optional(r.Pattern),
		Aliases:        slices.Clone(r.Aliases),
		OnOffUsed:      int64(r.OnOff.Used), OnOffUsedPass: int64(r.OnOff.UsedPass),
		OnOffOmitted: int64(r.OnOff.Omitted), OnOffOmittedPass: int64(r.OnOff.OmittedPass),
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// addExamples appends eval ids not already present, keeping the first few:
// the evidence a rule was created from stays visible.
func addExamples(ids []string, more ...string) []string {
	for _, id := range more {
		if id != "" && len(ids) < maxExampleIDs && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
