package check

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
)

// Evaluator is what Run needs of a harness.Supervisor.
type Evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
}

// Target is one task to check.
type Target struct {
	ID       string // <suite>/<stem>
	Level    int
	Task     datasets.Task
	Solution string // path of its solution file, "" when none
	// MaxMB is the suite's memory limit for one call (its suite.json); 0:
	// the harness's default.
	MaxMB float64
}

// Targets lists every task of the suites, with its solution if one exists.
func Targets(suites []datasets.Suite) []Target {
	var out []Target
	for _, s := range suites {
		for _, t := range s.Tasks {
			out = append(out, Target{ID: s.Name + "/" + t.Name, Level: s.Level, Task: t, Solution: s.Solution(t),
				MaxMB: s.Settings.MaxMB})
		}
	}
	return out
}

// Options control a run.
type Options struct {
	Depth       string // "auto", "full" or "shapes" (eval.CheckOptions.Depth)
	Job         eval.Options
	Concurrency int       // checks in flight; default 1
	Solutions   bool      // also evaluate each task's solution
	Progress    io.Writer // a progress bar, when non-nil
	// MaxMB, when positive, is every task's memory limit for one call
	// (--max-mb), in place of its suite's and the harness's default.
	MaxMB float64
}

// maxMB is the limit t's check runs under: the flag's, else the suite's,
// else 0 (the harness's default).
func (o Options) maxMB(t Target) float64 {
	if o.MaxMB > 0 {
		return o.MaxMB
	}
	return t.MaxMB
}

// Result is one task's outcome.
type Result struct {
	Target
	Verdict  eval.Verdict  // the task check's
	Solution *eval.Verdict // the solution's evaluation; nil when not run
	// SolutionNote says why a solution was not run.
	SolutionNote string
	Problems     []string // why the task is rejected; empty when it is valid
	Warnings     []string // defects that do not reject it (no name, no tags; the check verdict's warnings)
}

// OK reports whether the task is valid (and its solution, if run, correct).
func (r Result) OK() bool { return len(r.Problems) == 0 }

// Run checks every target. The error is ctx's when the run was cut short;
// results then hold only what finished.
func Run(ctx context.Context, ev Evaluator, targets []Target, opts Options) ([]Result, error) {
	results := make([]Result, len(targets))
	done := make([]bool, len(targets))
	var bar *progressbar.ProgressBar
	if opts.Progress != nil {
		bar = progressbar.NewOptions(len(targets), progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription("checking tasks"), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionClearOnFinish())
	}
	queue := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(opts.Concurrency, 1) {
		wg.Go(func() {
			for i := range queue {
				r, ok := one(ctx, ev, targets[i], opts)
				mu.Lock()
				results[i], done[i] = r, ok
				mu.Unlock()
				if bar != nil {
					bar.Add(1)
				}
			}
		})
	}
feed:
	for i := range targets {
		select {
		case queue <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	var out []Result
	for i, r := range results {
		if done[i] {
			out = append(out, r)
		}
	}
	return out, ctx.Err()
}

// one checks a target; ok is false when ctx ended it (no result to report).
func one(ctx context.Context, ev Evaluator, t Target, opts Options) (Result, bool) {
	r := Result{Target: t}
	task := t.Task
	v, err := ev.Evaluate(ctx, eval.Job{Task: task, Options: opts.Job, TaskCheck: true,
		Check: &eval.CheckOptions{Depth: opts.Depth, MaxMB: opts.maxMB(t)}})
	if ctx.Err() != nil {
		return r, false
	}
	if err != nil {
		r.Problems = append(r.Problems, "the check could not run: "+err.Error())
		return r, true
	}
	r.Verdict = v
	if v.Status != eval.StatusCorrect {
		reason := v.TaskError
		if reason == "" {
			reason = fmt.Sprintf("%s: %s", v.Status, firstLine(v.Feedback))
		}
		r.Problems = append(r.Problems, reason)
		return r, true
	}
	if info := v.TaskInfo; info == nil || info.Name == "" || len(info.Tags) == 0 {
		r.Warnings = append(r.Warnings, "no docstring name or no TAGS list (the manifest's name and tags stay empty)")
	}
	// The harness's own, such as a reference that has spent most of its tolerance
	// against its exact answer (verdict schema 1.5).
	r.Warnings = append(r.Warnings, v.Warnings...)
	if !opts.Solutions || t.Solution == "" {
		return r, true
	}
	if info := v.TaskInfo; info != nil && info.Depth == "shapes" {
		r.SolutionNote = "not run: the task was checked at shape level only"
		return r, true
	}
	code, err := os.ReadFile(t.Solution)
	if err != nil {
		r.Problems = append(r.Problems, "solution: "+err.Error())
		return r, true
	}
	sv, err := ev.Evaluate(ctx, eval.Job{Task: task, Code: string(code), Options: opts.Job})
	if ctx.Err() != nil {
		return r, false
	}
	if err != nil {
		r.Problems = append(r.Problems, "solution could not be evaluated: "+err.Error())
		return r, true
	}
	r.Solution = &sv
	if sv.Status != eval.StatusCorrect {
		r.Problems = append(r.Problems, fmt.Sprintf("solution %s is %s: %s", filepath.Base(t.Solution), sv.Status, firstLine(sv.Feedback)))
	}
	return r, true
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// MarshalJSON is `tasks check --json`'s record: the task's path, not its source.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID           string        `json:"id"`
		Level        int           `json:"level"`
		Path         string        `json:"path"`
		Solution     string        `json:"solution,omitempty"`
		OK           bool          `json:"ok"`
		Problems     []string      `json:"problems"`
		Warnings     []string      `json:"warnings"`
		Verdict      eval.Verdict  `json:"verdict"`
		Evaluation   *eval.Verdict `json:"solution_verdict,omitempty"`
		SolutionNote string        `json:"solution_note,omitempty"`
	}{r.ID, r.Level, r.Task.Path, r.Target.Solution, r.OK(), nonNil(r.Problems), nonNil(r.Warnings),
		r.Verdict, r.Solution, r.SolutionNote})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
