package export

import "time"

// Skill statuses.
const (
	SkillActive  = "active"
	SkillRetired = "retired"
)

// Skill is one row of the skills table: a rule learnt from failing
// evaluations ("You cannot ..."), with the evidence it came from and the
// versions it holds for. The skill library writes it (one row per skill
// version); exports read it. Nothing in this package writes it.
type Skill struct {
	EventID        string   `parquet:"event_id"` // skill.<id>.<version>: redelivered versions are written once
	SkillID        string   `parquet:"skill_id"`
	Version        int64    `parquet:"version"`
	Rule           string   `parquet:"rule"` // the "You cannot ..." sentence
	ErrorSignature string   `parquet:"error_signature"`
	FailingCode    string   `parquet:"failing_code"`
	ExampleEvalIDs []string `parquet:"example_eval_ids,list"`
	// Where the failures were seen; null when not known.
	Torch          *string   `parquet:"torch,optional"`
	Triton         *string   `parquet:"triton,optional"`
	GPUArch        *string   `parquet:"gpu_arch,optional"` // null on the CPU, or not known
	FirstSeen      time.Time `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       time.Time `parquet:"last_seen,timestamp(millisecond)"`
	Hits           int64     `parquet:"hits"`
	Status         string    `parquet:"status"`                    // SkillActive or SkillRetired
	RetiredReason  *string   `parquet:"retired_reason,optional"`   // null while active
	SourceSearchID *string   `parquet:"source_search_id,optional"` // null: not learnt in a search
	// Reason is why this version exists: created, hit, merged, retired:...
	Reason string `parquet:"reason"`
	// Pattern: the regexp of code that breaks the rule (null: none); Aliases:
	// the signatures of rules merged into it.
	Pattern *string  `parquet:"pattern,optional"`
	Aliases []string `parquet:"aliases,list"`
	// The on/off comparison as of this version: evaluations whose prompt held
	// the rule, and those that left it out, and how many of each passed.
	OnOffUsed        int64 `parquet:"on_off_used"`
	OnOffUsedPass    int64 `parquet:"on_off_used_pass"`
	OnOffOmitted     int64 `parquet:"on_off_omitted"`
	OnOffOmittedPass int64 `parquet:"on_off_omitted_pass"`
}

// Normalize gives a row read from a file of schema 1.4 or before the
// meaning 1.5 writes: null, not "", where a value is not known.
func (r *Skill) Normalize() {
	for _, p := range []**string{&r.Torch, &r.Triton, &r.GPUArch, &r.RetiredReason, &r.SourceSearchID} {
		if *p != nil && **p == "" {
			*p = nil
		}
	}
}
