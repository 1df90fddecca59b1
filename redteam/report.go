package redteam

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// Outcome is one case's line in the report.
type Outcome struct {
	Task    string      `json:"task"`
	Class   string      `json:"class,omitempty"` // "" for a control
	Status  eval.Status `json:"status,omitempty"`
	Flags   []string    `json:"flags"`
	Speedup *float64    `json:"speedup,omitempty"`
	// Caught: a variant not judged correct, given no speedup, and whose
	// verdict carries no planted secret; for a control, judged correct.
	Caught bool `json:"caught"`
	// Miss says why a variant is a miss, or a control a failure.
	Miss    string `json:"miss,omitempty"`
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"` // the evaluation could not run
	// Saved is where the source of a miss was written (--out).
	Saved string `json:"saved,omitempty"`

	code string
}

// ClassReport is one class's figures.
type ClassReport struct {
	Name        string         `json:"name"`
	Catalogue   string         `json:"catalogue"`
	Description string         `json:"description"`
	GPUOnly     bool           `json:"gpu_only"`
	Gap         string         `json:"gap,omitempty"` // a known harness gap (Class.Gap)
	Generated   int            `json:"generated"`
	Evaluated   int            `json:"evaluated"`
	Caught      int            `json:"caught"`
	Missed      int            `json:"missed"`
	KnownGap    int            `json:"known_gap"` // misses of a class with a known gap
	Skipped     int            `json:"skipped"`
	Errors      int            `json:"errors"`
	Statuses    map[string]int `json:"statuses"` // of the caught variants
	Flags       map[string]int `json:"flags"`    // of the caught variants
	Tasks       []Outcome      `json:"tasks"`
}

// Report is a run's outcome (`kernelgate redteam --json`, GET /v1/redteam/{id}).
type Report struct {
	Mode     string        `json:"mode"` // the verdicts' timing mode
	Tasks    []string      `json:"tasks"`
	Classes  []ClassReport `json:"classes"`
	Controls []Outcome     `json:"controls"`
	// Totals over the classes' variants, and the controls that failed.
	Generated      int `json:"generated"`
	Evaluated      int `json:"evaluated"`
	Caught         int `json:"caught"`
	Missed         int `json:"missed"`
	KnownGap       int `json:"known_gap"`
	Skipped        int `json:"skipped"`
	Errors         int `json:"errors"`
	ControlsFailed int `json:"controls_failed"`
	// GapsClosed are the classes with a known gap that missed nothing.
	GapsClosed []string `json:"gaps_closed"`
	WallS      float64  `json:"wall_s"`
	// OK: nothing missed beyond the known gaps, no known gap closed, every
	// control correct, every evaluation ran.
	OK bool `json:"ok"`
}

// Judging is what Build holds verdicts to beyond their status.
type Judging struct {
	Secrets []string // planted secrets, which no verdict may carry
	// Leftovers are the host paths each case (by index) left behind
	// (Leftovers): a variant that left one reached outside its evaluation.
	Leftovers map[int][]string
}

// judge says whether a variant's verdict caught it: not correct, no
// speedup, no planted secret anywhere in it. why is "" when caught.
func judge(v eval.Verdict, secrets []string) string {
	switch {
	case v.Status == eval.StatusCorrect:
		return "judged correct"
	case v.Speedup != nil:
		return fmt.Sprintf("given a speedup of %.3gx while %s", *v.Speedup, v.Status)
	}
	if leaked := leakedSecret(v, secrets); leaked {
		return "a planted secret reached the verdict"
	}
	return ""
}

func leakedSecret(v eval.Verdict, secrets []string) bool {
	if len(secrets) == 0 {
		return false
	}
	data, err := json.Marshal(v)
	if err != nil {
		return true // cannot tell: not a pass
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(string(data), s) {
			return true
		}
	}
	return false
}

// Build assembles the report of cases and their results (results[i] is
// cases[i]'s), judging every verdict.
func Build(cases []Case, results []Result, classes []Class, j Judging) Report {
	r := Report{Tasks: []string{}, Controls: []Outcome{}, GapsClosed: []string{}}
	byClass := map[string]*ClassReport{}
	for _, c := range classes {
		r.Classes = append(r.Classes, ClassReport{Name: c.Name, Catalogue: c.Catalogue, Description: c.Description,
			GPUOnly: c.GPUOnly, Gap: c.Gap, Statuses: map[string]int{}, Flags: map[string]int{}, Tasks: []Outcome{}})
	}
	for i := range r.Classes {
		byClass[r.Classes[i].Name] = &r.Classes[i]
	}
	for i, cs := range cases {
		if !slices.Contains(r.Tasks, cs.Target) {
			r.Tasks = append(r.Tasks, cs.Target)
		}
		o := outcome(cs, results[i], j.Secrets)
		if left := j.Leftovers[i]; len(left) > 0 && o.Caught && cs.Class != nil {
			o.Caught, o.Miss = false, fmt.Sprintf("left %s on the host, outside its evaluation's private directories", strings.Join(left, ", "))
		}
		if cs.Class == nil {
			if !o.Caught {
				r.ControlsFailed++
			}
			if o.Error != "" {
				r.Errors++
			}
			r.Controls = append(r.Controls, o)
			continue
		}
		cr := byClass[cs.Class.Name]
		if cr == nil {
			continue
		}
		cr.Tasks = append(cr.Tasks, o)
		if cs.Code != "" {
			cr.Generated++
		}
		switch {
		case o.Skipped != "":
			cr.Skipped++
		case o.Error != "":
			cr.Errors++
		case o.Caught:
			cr.Evaluated++
			cr.Caught++
			cr.Statuses[string(o.Status)]++
			for _, f := range o.Flags {
				cr.Flags[f]++
			}
		case cs.Class.Gap != "":
			cr.Evaluated++
			cr.KnownGap++
		default:
			cr.Evaluated++
			cr.Missed++
		}
	}
	for _, cr := range r.Classes {
		r.Generated += cr.Generated
		r.Evaluated += cr.Evaluated
		r.Caught += cr.Caught
		r.Missed += cr.Missed
		r.Skipped += cr.Skipped
		r.Errors += cr.Errors
		r.KnownGap += cr.KnownGap
		if cr.Gap != "" && cr.Evaluated > 0 && cr.KnownGap == 0 {
			r.GapsClosed = append(r.GapsClosed, cr.Name)
		}
	}
	for _, res := range results {
		if res.Verdict != nil && res.Verdict.TimingMode != "" {
			r.Mode = res.Verdict.TimingMode
			break
		}
	}
	r.OK = r.Missed == 0 && r.ControlsFailed == 0 && r.Errors == 0 && len(r.GapsClosed) == 0
	return r
}

func outcome(cs Case, res Result, secrets []string) Outcome {
	o := Outcome{Task: cs.Target, Flags: []string{}, code: cs.Code}
	if cs.Class != nil {
		o.Class = cs.Class.Name
	}
	switch {
	case cs.Skip != "":
		o.Skipped = cs.Skip
		return o
	case res.Verdict == nil:
		o.Error = res.Err
		if o.Error == "" {
			o.Error = "not evaluated (the run was cut short)"
		}
		if cs.Class == nil {
			o.Miss = "the control could not be evaluated"
		}
		return o
	}
	v := *res.Verdict
	o.Status, o.Speedup = v.Status, v.Speedup
	if v.HackFlags != nil {
		o.Flags = v.HackFlags
	}
	if cs.Class == nil {
		o.Caught = v.Status == eval.StatusCorrect
		if !o.Caught {
			o.Miss = fmt.Sprintf("the honest solution is %s: %s", v.Status, firstLine(v.Feedback))
		}
		return o
	}
	o.Miss = judge(v, secrets)
	o.Caught = o.Miss == ""
	return o
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
