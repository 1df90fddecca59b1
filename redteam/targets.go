package redteam

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernelgate/kernelgate/datasets"
)

// Targets pairs each task of the suite in taskDir with the solution of the
// same file name in solDir. A task without one is named on w and left out;
// none at all is an error.
func Targets(taskDir, solDir string, w io.Writer) ([]Target, error) {
	if fi, err := os.Stat(solDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("solutions %s: not a directory", solDir)
	}
	tasks, err := datasets.Load(taskDir)
	if err != nil {
		return nil, err
	}
	suite := filepath.Base(filepath.Clean(taskDir))
	var out []Target
	for _, t := range tasks {
		src, err := os.ReadFile(filepath.Join(solDir, filepath.Base(t.Path)))
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(w, "redteam: %s has no solution in %s; left out\n", t.Name, solDir)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("redteam.Targets: %w", err)
		}
		out = append(out, Target{ID: suite + "/" + t.Name, Task: t, Solution: string(src)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no task in %s has a solution in %s", taskDir, solDir)
	}
	return out, nil
}

// Failure says what made a run fail (nil when r.OK), for an exit status's
// one line: the classes that missed, the controls, the evaluations that
// could not run, the known gaps that closed.
func (r Report) Failure() error {
	if r.OK {
		return nil
	}
	var parts []string
	var missed []string
	for _, c := range r.Classes {
		if c.Missed > 0 {
			missed = append(missed, fmt.Sprintf("%s (%d)", c.Name, c.Missed))
		}
	}
	if len(missed) > 0 {
		parts = append(parts, fmt.Sprintf("%d variants missed: %s", r.Missed, strings.Join(missed, ", ")))
	}
	if r.ControlsFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d controls not correct", r.ControlsFailed))
	}
	if r.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d evaluations could not run", r.Errors))
	}
	if len(r.GapsClosed) > 0 {
		parts = append(parts, "known gaps closed (remove their gap: line): "+strings.Join(r.GapsClosed, ", "))
	}
	return errors.New("redteam: " + strings.Join(parts, "; "))
}
