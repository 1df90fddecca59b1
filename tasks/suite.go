package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
)

// LoadSuites loads each directory as a suite named by its base name: the
// task in datasets/ci/1_add_relu.py is ci/1_add_relu. Two suites with the
// same name, a directory without tasks, or a file whose stem is not a valid
// id segment are errors: a task must not vanish silently.
func LoadSuites(dirs []string) ([]Task, error) {
	var out []Task
	seen := map[string]string{}
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("tasks.LoadSuites: %w", err)
		}
		suite := filepath.Base(abs)
		if err := ValidID(suite); err != nil || suite != nameOf(suite) {
			return nil, fmt.Errorf("tasks.LoadSuites: %s: the directory name %q cannot be a suite name (letters, digits, '_', '-')", dir, suite)
		}
		if prev, ok := seen[suite]; ok {
			return nil, fmt.Errorf("tasks.LoadSuites: %s and %s are both suite %q", prev, abs, suite)
		}
		seen[suite] = abs
		files, err := datasets.Load(abs)
		if err != nil {
			return nil, fmt.Errorf("tasks.LoadSuites: %w", err)
		}
		for _, f := range files {
			id := suite + "/" + f.Name
			if err := ValidID(id); err != nil {
				return nil, fmt.Errorf("tasks.LoadSuites: %s: %w", f.Path, err)
			}
			if len(f.Source) > MaxSourceBytes {
				return nil, fmt.Errorf("tasks.LoadSuites: %s is %d bytes; at most %d", f.Path, len(f.Source), MaxSourceBytes)
			}
			out = append(out, New(id, f.Source, OriginSuite, modTime(f.Path)))
		}
	}
	return out, nil
}

// DefaultDirs are the suites used when --tasks is not given: every
// subdirectory of the first datasets/ found next to the working directory
// wd, else next to the binary exe (bin/kernelgate finds ../datasets), that
// holds task files; solutions/ is not a suite. None found: nil.
func DefaultDirs(wd, exe string) []string {
	var roots []string
	if wd != "" {
		roots = append(roots, filepath.Join(wd, "datasets"))
	}
	if exe != "" {
		bin := filepath.Dir(exe)
		roots = append(roots, filepath.Join(bin, "datasets"), filepath.Join(bin, "..", "datasets"))
	}
	for _, root := range roots {
		if dirs, err := datasets.SuiteDirs(root); err == nil && len(dirs) > 0 {
			return dirs
		}
	}
	return nil
}

// modTime is when the file last changed: a suite task's created_at, stable
// across restarts.
func modTime(path string) (t time.Time) {
	if fi, err := os.Stat(path); err == nil {
		t = fi.ModTime()
	}
	return t
}
