package dataset

import (
	"time"
)

// Manifest describes one export (manifest.json, and POST /v1/exports' answer).
type Manifest struct {
	ExportID          string          `json:"export_id,omitempty"` // POST /v1/exports only
	Format            Format          `json:"format"`
	SchemaVersion     string          `json:"schema_version"`
	CreatedAt         time.Time       `json:"created_at"`
	KernelgateVersion string          `json:"kernelgate_version"`
	Filters           ManifestFilters `json:"filters"`
	Options           ManifestOptions `json:"options"`
	// Sources are the log files read (relative to the data directory) or
	// the task files (task:<id> for a task without one).
	Sources []string         `json:"sources"`
	Files   map[string]int64 `json:"files"` // output file → rows
	Rows    int64            `json:"rows"`  // all output files
	// Skipped counts rows that matched the filters but are in no output:
	// invalid (evaluations whose valid is false: the API told the trainer to
	// drop them; --include-invalid keeps them), no_prompt (no task source,
	// no suite task with its hash).
	Skipped map[string]int64 `json:"skipped"`
	// FiltersApplied (arrow) names, per output file, the filters that
	// selected its rows (since, until, task, status, min_speedup, and valid:
	// invalid evaluations left out); a filter its table has no column for
	// is not applied, and that table is whole on it.
	FiltersApplied map[string][]string `json:"filters_applied,omitempty"`
	// SuitesLeftOut (verl) names the suites found beside the defaults but
	// not read (heavy): no prompt of theirs is in the export.
	SuitesLeftOut []string `json:"suites_left_out,omitempty"`
	// Empty (arrow) lists the files not written because no row matched:
	// Hugging Face datasets refuses a file of 0 rows.
	Empty []string `json:"empty,omitempty"`
	// Context counts rows an export holds although they are outside
	// --since/--until, so that what it holds is whole: search-trees'
	// earlier_steps (a tree with a step in range is exported from its root).
	Context map[string]int64 `json:"context,omitempty"`
}

// ManifestFilters are the filters as applied (times in UTC RFC3339).
type ManifestFilters struct {
	Since      *time.Time `json:"since,omitempty"`
	Until      *time.Time `json:"until,omitempty"`
	Task       []string   `json:"task,omitempty"`
	Status     []string   `json:"status,omitempty"`
	MinSpeedup *float64   `json:"min_speedup,omitempty"`
	// IncludeInvalid: invalid evaluations were kept (else counted in skipped).
	IncludeInvalid bool `json:"include_invalid,omitempty"`
}

// ManifestOptions are the format's options (only those of its format).
type ManifestOptions struct {
	TestFraction    *float64 `json:"test_fraction,omitempty"`
	TopK            *int     `json:"top_k,omitempty"`
	MinMargin       *float64 `json:"min_margin,omitempty"`
	MaxPairsPerTask *int     `json:"max_pairs_per_task,omitempty"`
}

func newManifest(spec Spec, src Source) *Manifest {
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	f := spec.Filter
	m := &Manifest{
		ExportID: src.ExportID, Format: spec.Format, SchemaVersion: SchemaVersion, CreatedAt: now().UTC().Truncate(time.Millisecond),
		KernelgateVersion: src.Version, Sources: []string{}, Files: map[string]int64{}, Skipped: map[string]int64{},
		Filters: ManifestFilters{Task: f.Tasks, Status: f.Statuses, MinSpeedup: f.MinSpeedup, IncludeInvalid: f.IncludeInvalid},
	}
	if !f.Since.IsZero() {
		m.Filters.Since = ptr(f.Since)
	}
	if !f.Until.IsZero() {
		m.Filters.Until = ptr(f.Until)
	}
	switch spec.Format {
	case FormatVerl:
		m.Options.TestFraction = ptr(spec.TestFraction)
		m.SuitesLeftOut = src.SuitesLeftOut
	case FormatSFT:
		m.Options.TopK = ptr(spec.TopK)
		m.Skipped[SkipNoPrompt] = 0
	case FormatDPO:
		m.Options.MinMargin, m.Options.MaxPairsPerTask = ptr(spec.MinMargin), ptr(spec.MaxPairsPerTask)
		m.Skipped[SkipNoPrompt] = 0
	}
	if readsEvaluations(spec.Format) && !f.IncludeInvalid {
		m.Skipped[SkipInvalid] = 0
	}
	return m
}

// Reasons a matching row is in no output.
const (
	SkipNoPrompt = "no_prompt"
	SkipInvalid  = "invalid"
)

func (m *Manifest) addFile(name string, rows int) {
	m.Files[name] = int64(rows)
	m.Rows += int64(rows)
}

func (m *Manifest) addContext(what string) {
	if m.Context == nil {
		m.Context = map[string]int64{}
	}
	m.Context[what]++
}
