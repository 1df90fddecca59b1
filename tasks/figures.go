package tasks

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kernelgate/kernelgate/datasets"
)

// WithFigures gives each suite task of ts the GPU figures of its manifest
// entry: the manifest.json next to its suite's directory (datasets/manifest.json
// for datasets/ci, as `kernelgate tasks list` reads it), matched by id. A
// suite without a manifest keeps no figures; a manifest that cannot be read
// is reported, and the other suites still get theirs. The figures are what
// the last GPU check measured (measured_at says when): a task file edited
// since keeps them until the next check.
func WithFigures(ts []Task, dirs []string) error {
	byID := map[string]*datasets.GPURun{}
	var errs []error
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m, err := datasets.ReadManifest(filepath.Join(filepath.Dir(abs), "manifest.json"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		suite := filepath.Base(abs)
		for _, e := range m.Tasks {
			if e.GPU != nil && filepath.Dir(filepath.FromSlash(e.ID)) == suite {
				byID[e.ID] = e.GPU
			}
		}
	}
	for i := range ts {
		if g := byID[ts[i].ID]; g != nil && ts[i].Origin == OriginSuite {
			run := *g
			ts[i].GPU = &run
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tasks.WithFigures: %w", err)
	}
	return nil
}
