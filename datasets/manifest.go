package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// ManifestSchema is the manifest layout's version; bump it when a field
// changes meaning (adding one does not).
const ManifestSchema = 1

// Manifest describes the project's task suites (datasets/manifest.json).
// `kernelgate tasks check --manifest` writes it; the figures measured on a
// GPU are kept until a GPU run replaces them.
type Manifest struct {
	Schema int     `json:"schema_version"`
	Tasks  []Entry `json:"tasks"`
}

// Entry is one task.
type Entry struct {
	ID       string   `json:"id"` // <suite>/<file stem>, as the gateway names it
	Name     string   `json:"name"`
	Level    int      `json:"level"` // 0 for suites without a level (ci)
	Tags     []string `json:"tags"`
	DType    string   `json:"dtype"` // the first output's
	Outputs  []Output `json:"outputs"`
	GFLOP    *float64 `json:"gflop"` // matmuls and convolutions of one call
	MB       *float64 `json:"mb"`    // inputs + parameters + outputs of one call
	Solution string   `json:"solution,omitempty"`
	// Checked is how deep the last check went: "full" or "shapes".
	Checked string  `json:"checked"`
	GPU     *GPURun `json:"gpu,omitempty"`
}

// Output is one output tensor.
type Output struct {
	Shape []int64 `json:"shape"`
	DType string  `json:"dtype"`
}

// GPURun is what a check on a GPU measured.
type GPURun struct {
	Name            string   `json:"name"` // e.g. "NVIDIA H200"
	RefMS           float64  `json:"ref_ms"`
	RefP10MS        float64  `json:"ref_p10_ms"`
	RefP90MS        float64  `json:"ref_p90_ms"`
	SolutionSpeedup *float64 `json:"solution_speedup,omitempty"`
	SolutionMS      *float64 `json:"solution_ms,omitempty"`
	MeasuredAt      string   `json:"measured_at"` // YYYY-MM-DD
}

// ReadManifest reads path; a missing file is an empty manifest.
func ReadManifest(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{Schema: ManifestSchema}, nil
	}
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Schema != ManifestSchema {
		return Manifest{}, fmt.Errorf("%s: manifest schema_version %d; this kernelgate reads %d", path, m.Schema, ManifestSchema)
	}
	return m, nil
}

// Merge puts entries into m, replacing those with the same id. A new entry
// without GPU figures keeps the old entry's (a CPU check measures none).
func (m *Manifest) Merge(entries []Entry) {
	byID := make(map[string]int, len(m.Tasks))
	for i, e := range m.Tasks {
		byID[e.ID] = i
	}
	for _, e := range entries {
		i, ok := byID[e.ID]
		if !ok {
			byID[e.ID] = len(m.Tasks)
			m.Tasks = append(m.Tasks, e)
			continue
		}
		if e.GPU == nil && m.Tasks[i].GPU != nil {
			// A CPU check keeps the GPU's figures, and with them how deep the GPU
			// checked: a shape-level CPU pass does not undo a full GPU run.
			e.GPU = m.Tasks[i].GPU
			if e.Checked == "shapes" {
				e.Checked = m.Tasks[i].Checked
			}
		}
		m.Tasks[i] = e
	}
	sort.Slice(m.Tasks, func(i, j int) bool { return NaturalLess(m.Tasks[i].ID, m.Tasks[j].ID) })
}

// Find is the entry with id, if any.
func (m Manifest) Find(id string) (Entry, bool) {
	for _, e := range m.Tasks {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// Write writes m to path atomically (temp file, rename).
func (m Manifest) Write(path string) error {
	m.Schema = ManifestSchema
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".manifest-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Remove drops the entries with these ids.
func (m *Manifest) Remove(ids []string) {
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	kept := m.Tasks[:0]
	for _, e := range m.Tasks {
		if !gone[e.ID] {
			kept = append(kept, e)
		}
	}
	m.Tasks = kept
}
