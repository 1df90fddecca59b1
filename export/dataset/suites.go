package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kernelgate/kernelgate/tasks"
)

// DefaultSuiteNames are the suites an export reads when none are given.
var DefaultSuiteNames = []string{"ci", "level1", "level2", "level3"}

// DefaultSuites are the DefaultSuiteNames found under the datasets/ that
// tasks.DefaultDirs finds (next to wd, else next to the binary exe), and
// the names of the other suites found there (heavy: tasks too large for
// most hosts), which an export reads only when asked (Source.SuitesLeftOut).
func DefaultSuites(wd, exe string) (dirs, leftOut []string) {
	for _, d := range tasks.DefaultDirs(wd, exe) {
		if slices.Contains(DefaultSuiteNames, filepath.Base(d)) {
			dirs = append(dirs, d)
		} else {
			leftOut = append(leftOut, filepath.Base(d))
		}
	}
	return dirs, leftOut
}

// LoadSuites loads dirs (tasks.LoadSuites) and names each task's file, for
// a Source.
func LoadSuites(dirs []string) ([]tasks.Task, map[string]string, error) {
	ts, err := tasks.LoadSuites(dirs)
	if err != nil {
		return nil, nil, err
	}
	bySuite := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset.LoadSuites: %w", err)
		}
		bySuite[filepath.Base(abs)] = d
	}
	wd, _ := os.Getwd()
	files := map[string]string{}
	for _, t := range ts {
		suite := t.ID[:len(t.ID)-len(t.Name)-1]
		p := filepath.Join(bySuite[suite], t.Name+".py")
		if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsAbs(p) && !strings.HasPrefix(rel, "..") {
			p = rel // the manifest names files relative to the working directory when it can
		}
		files[t.ID] = filepath.ToSlash(p)
	}
	return ts, files, nil
}
