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
	// no_prompt (no task source, no suite task with its hash), cached
	// (duplicates of real evaluations).
	Skipped map[string]int64 `json:"skipped"`
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
		Filters: ManifestFilters{Task: f.Tasks, Status: f.Statuses, MinSpeedup: f.MinSpeedup},
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
	case FormatSFT:
		m.Options.TopK = ptr(spec.TopK)
		m.Skipped[SkipNoPrompt], m.Skipped[SkipCached] = 0, 0
	case FormatDPO:
		m.Options.MinMargin, m.Options.MaxPairsPerTask = ptr(spec.MinMargin), ptr(spec.MaxPairsPerTask)
		m.Skipped[SkipNoPrompt], m.Skipped[SkipCached] = 0, 0
	}
	return m
}

// Reasons a matching row is in no output.
const (
	SkipNoPrompt = "no_prompt"
	SkipCached   = "cached"
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
