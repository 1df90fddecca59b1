package dataset

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
)

// Format names an export layout.
type Format string

const (
	FormatVerl   Format = "verl"
	FormatSFT    Format = "sft"
	FormatDPO    Format = "dpo"
	FormatSkills Format = "skills"
	FormatArrow  Format = "arrow"
	// FormatTrajectories: offline-RL tuples from searches, episodes and
	// rewards; FormatSearchTrees: every search's tree, root included.
	FormatTrajectories Format = "trajectories"
	FormatSearchTrees  Format = "search-trees"
)

// Formats are the known formats, in the order help texts list them.
var Formats = []Format{FormatVerl, FormatSFT, FormatDPO, FormatSkills, FormatArrow, FormatTrajectories, FormatSearchTrees}

// Defaults of the format options.
const (
	DefaultTestFraction    = 0.1
	DefaultTopK            = 1
	DefaultMinMargin       = 0.1
	DefaultMaxPairsPerTask = 16
)

// Request is an export as the CLI flags and the POST /v1/exports body give
// it: strings as typed, options nil for their defaults. Parse checks it.
type Request struct {
	Format          string   `json:"format"`
	Since           string   `json:"since,omitempty"` // RFC3339 or YYYY-MM-DD (UTC midnight)
	Until           string   `json:"until,omitempty"` // RFC3339 (exclusive) or YYYY-MM-DD (that whole day)
	Task            []string `json:"task,omitempty"`  // task ids or globs (level2/*)
	Status          []string `json:"status,omitempty"`
	MinSpeedup      *float64 `json:"min_speedup,omitempty"`
	TestFraction    *float64 `json:"test_fraction,omitempty"`      // verl
	TopK            *int     `json:"top_k,omitempty"`              // sft
	MinMargin       *float64 `json:"min_margin,omitempty"`         // dpo
	MaxPairsPerTask *int     `json:"max_pairs_per_task,omitempty"` // dpo
	// IncludeInvalid keeps evaluations whose valid is false (a deadline
	// stop, a broken reference): left out by default, as a trainer drops them.
	IncludeInvalid bool `json:"include_invalid,omitempty"`
}

// InputError is a bad request: the CLI exits 2 on it, the gateway answers
// 400 with the same message. Field is the request field (JSON name) at fault.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

func inputErr(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Filter selects log rows. Each part applies to the tables that have its
// column: ts (skills: last_seen), task_id, status, speedup, valid. A status
// is a verdict's (evaluations, episode_steps, search_steps) or a skill's
// (skills: active, retired): each kind applies to the tables of its kind
// only. Zero: all rows.
type Filter struct {
	Since, Until time.Time // [Since, Until); zero: open
	Tasks        []string  // exact ids or path.Match globs
	Statuses     []string
	MinSpeedup   *float64 // rows with a null speedup never pass it
	// IncludeInvalid keeps evaluations with valid false (export.Evaluation.IsValid).
	IncludeInvalid bool
}

// Spec is a checked Request, defaults filled in.
type Spec struct {
	Format          Format
	Filter          Filter
	TestFraction    float64
	TopK            int
	MinMargin       float64
	MaxPairsPerTask int
}

// Parse checks r and fills in the defaults.
func (r Request) Parse() (Spec, error) {
	s := Spec{Format: Format(r.Format), TestFraction: DefaultTestFraction, TopK: DefaultTopK,
		MinMargin: DefaultMinMargin, MaxPairsPerTask: DefaultMaxPairsPerTask}
	if !slices.Contains(Formats, s.Format) {
		return s, inputErr("format", "unknown format %q: want one of %s", r.Format, formatList())
	}
	var err error
	if s.Filter.Since, err = parseTime("since", r.Since, false); err != nil {
		return s, err
	}
	if s.Filter.Until, err = parseTime("until", r.Until, true); err != nil {
		return s, err
	}
	if !s.Filter.Since.IsZero() && !s.Filter.Until.IsZero() && !s.Filter.Since.Before(s.Filter.Until) {
		return s, inputErr("until", "until %s is not after since %s", r.Until, r.Since)
	}
	for _, p := range r.Task {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return s, inputErr("task", "task %q: want a task id or a glob such as level2/*", p)
		}
	}
	s.Filter.Tasks = slices.Clone(r.Task)
	for _, st := range r.Status {
		if !slices.Contains(knownStatuses, st) {
			return s, inputErr("status", "unknown status %q: want one of %s", st, strings.Join(knownStatuses, ", "))
		}
	}
	s.Filter.Statuses = slices.Clone(r.Status)
	s.Filter.IncludeInvalid = r.IncludeInvalid
	if v := r.MinSpeedup; v != nil {
		if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
			return s, inputErr("min_speedup", "min speedup %g: want a finite number, 0 or more", *v)
		}
		s.Filter.MinSpeedup = ptr(*v)
	}
	if v := r.TestFraction; v != nil {
		if math.IsNaN(*v) || *v < 0 || *v >= 1 {
			return s, inputErr("test_fraction", "test fraction %g: want 0 <= f < 1", *v)
		}
		s.TestFraction = *v
	}
	if v := r.TopK; v != nil {
		if *v < 1 {
			return s, inputErr("top_k", "top k %d: want 1 or more", *v)
		}
		s.TopK = *v
	}
	if v := r.MinMargin; v != nil {
		if math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 {
			return s, inputErr("min_margin", "min margin %g: want a finite number, 0 or more", *v)
		}
		s.MinMargin = *v
	}
	if v := r.MaxPairsPerTask; v != nil {
		if *v < 1 {
			return s, inputErr("max_pairs_per_task", "max pairs per task %d: want 1 or more", *v)
		}
		s.MaxPairsPerTask = *v
	}
	return s, s.applies()
}

// applies refuses a filter the format has no column for (it would
// silently select everything).
func (s Spec) applies() error {
	f := s.Filter
	var field string
	switch s.Format {
	case FormatVerl: // task suites: ids only
		field = firstSet(!f.Since.IsZero(), "since", !f.Until.IsZero(), "until", len(f.Statuses) > 0, "status", f.MinSpeedup != nil, "min_speedup",
			f.IncludeInvalid, "include_invalid")
	case FormatSkills: // no task_id, no speedup, no evaluations
		field = firstSet(len(f.Tasks) > 0, "task", f.MinSpeedup != nil, "min_speedup", f.IncludeInvalid, "include_invalid")
	case FormatSearchTrees: // a tree is whole or not at all
		field = firstSet(len(f.Statuses) > 0, "status", f.MinSpeedup != nil, "min_speedup", f.IncludeInvalid, "include_invalid")
	}
	if field != "" {
		return inputErr(field, "%s does not apply to format %s (it has no such column)", field, s.Format)
	}
	switch s.Format {
	case FormatSkills:
		if st := f.statuses(false); len(st) > 0 {
			return inputErr("status", "status %s does not apply to format skills (a skill's status is %s or %s)", st[0], export.SkillActive, export.SkillRetired)
		}
	case FormatSFT, FormatDPO, FormatTrajectories:
		if st := f.statuses(true); len(st) > 0 {
			return inputErr("status", "status %s is a skill's; format %s holds evaluations (a verdict's status)", st[0], s.Format)
		}
	}
	return nil
}

// firstSet returns the name after the first true flag of (flag, name) pairs.
func firstSet(pairs ...any) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(bool) {
			return pairs[i+1].(string)
		}
	}
	return ""
}

// knownStatuses are the verdict statuses and the skill statuses.
var knownStatuses = []string{
	string(eval.StatusCorrect), string(eval.StatusIncorrect), string(eval.StatusCompileError),
	string(eval.StatusRuntimeError), string(eval.StatusTimeout), string(eval.StatusCompileTimeout),
	string(eval.StatusResourceLimit),
	string(eval.StatusRewardHack), string(eval.StatusInvalidSubmission), string(eval.StatusHarnessError),
	export.SkillActive, export.SkillRetired,
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// parseTime reads RFC3339 or a bare UTC date; a bare date as the upper
// bound means the end of that day, so --since D --until D is day D.
func parseTime(field, s string, upper bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, inputErr(field, "%s %q: want RFC3339 (2026-11-29T12:00:00Z) or YYYY-MM-DD", field, s)
	}
	if upper {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// time reports whether ts is within [Since, Until).
func (f Filter) time(ts time.Time) bool {
	return (f.Since.IsZero() || !ts.Before(f.Since)) && (f.Until.IsZero() || ts.Before(f.Until))
}

// date reports whether the partition date=d can hold rows within the range.
func (f Filter) date(d string) bool {
	day, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return true // not ours to judge: read it
	}
	return (f.Since.IsZero() || day.AddDate(0, 0, 1).After(f.Since)) && (f.Until.IsZero() || day.Before(f.Until))
}

// task reports whether id matches one of the task patterns (none: all).
func (f Filter) task(id string) bool {
	if len(f.Tasks) == 0 {
		return true
	}
	for _, p := range f.Tasks {
		if ok, _ := path.Match(p, id); ok || p == id {
			return true
		}
	}
	return false
}

// statuses are the filter's skill statuses (skill) or verdict statuses.
func (f Filter) statuses(skill bool) []string {
	var out []string
	for _, s := range f.Statuses {
		if (s == export.SkillActive || s == export.SkillRetired) == skill {
			out = append(out, s)
		}
	}
	return out
}

// status reports whether a verdict status passes: the filter names no
// verdict status, or this one.
func (f Filter) status(st string) bool {
	s := f.statuses(false)
	return len(s) == 0 || slices.Contains(s, st)
}

// skillStatus is status for a skill's status.
func (f Filter) skillStatus(st string) bool {
	s := f.statuses(true)
	return len(s) == 0 || slices.Contains(s, st)
}

func (f Filter) speedup(sp *float64) bool {
	return f.MinSpeedup == nil || (sp != nil && *sp >= *f.MinSpeedup)
}

func (f Filter) evaluation(r export.Evaluation) bool {
	return f.time(r.TS) && f.task(r.TaskID) && f.status(r.Status) && f.speedup(r.Speedup)
}

func (f Filter) episodeStep(r export.EpisodeStep) bool {
	return f.time(r.TS) && f.task(r.TaskID) && f.status(r.Status) && f.speedup(r.Speedup)
}

func (f Filter) rejected(r export.Rejected) bool { return f.time(r.TS) }

func (f Filter) skill(r export.Skill) bool { return f.time(r.LastSeen) && f.skillStatus(r.Status) }

func (f Filter) searchStep(r export.SearchStep) bool {
	status := ""
	if r.Status != nil {
		status = *r.Status
	}
	return f.time(r.TS) && f.task(r.TaskID) && f.status(status) && f.speedup(r.Speedup)
}

func (f Filter) llmCall(r export.LLMCall) bool { return f.time(r.TS) }

// search: a search's state is no verdict status, so --status does not apply.
func (f Filter) search(r export.Search) bool { return f.time(r.TS) && f.task(r.TaskID) }

func ptr[T any](v T) *T { return &v }
