package redteam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Options control Run.
type Options struct {
	Classes     []Class // the classes to generate (Classes() for all)
	Job         eval.Options
	Concurrency int // evaluations in flight; default 1
	// SkipGPUOnly leaves GPU-only classes unevaluated (the CPU interpreter).
	SkipGPUOnly bool
	Canaries    *Canaries // planted secrets (nil: none)
	Progress    func(done, total int)
}

// Run generates every variant of the targets, evaluates them and their
// controls through ev, and reports. The error is ctx's when the run was cut
// short; the report then holds what finished.
func Run(ctx context.Context, ev Evaluator, targets []Target, o Options) (Report, error) {
	start := time.Now()
	po := PlanOptions{SkipGPUOnly: o.SkipGPUOnly, Nonce: NewSecret()}
	var j Judging
	if o.Canaries != nil {
		po.CanaryFiles, j.Secrets = o.Canaries.Files, o.Canaries.Secrets
	}
	cases := Plan(targets, o.Classes, po)
	total := 0
	for _, c := range cases {
		if c.Skip == "" {
			total++
		}
	}
	var done func()
	if o.Progress != nil {
		var mu sync.Mutex
		n := 0
		done = func() {
			mu.Lock()
			defer mu.Unlock()
			n++
			o.Progress(n, total)
		}
	}
	results, err := EvaluateAll(ctx, ev, cases, o.Job, o.Concurrency, done)
	j.Leftovers = Leftovers(cases, LeftoverDirs...)
	r := Build(cases, results, o.Classes, j)
	r.WallS = time.Since(start).Seconds()
	return r, err
}

// SaveMisses writes the source of every missed variant (known gaps too, and of every
// control that failed) under dir as <task>/<class>.py, for a regression
// fixture, and records where in the report.
func SaveMisses(dir string, r *Report) error {
	save := func(o *Outcome, name string) error {
		if o.code == "" {
			return nil
		}
		sub := filepath.Join(dir, strings.NewReplacer("/", "_", "\\", "_").Replace(o.Task))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return fmt.Errorf("redteam.SaveMisses: %w", err)
		}
		path := filepath.Join(sub, name+".py")
		if err := os.WriteFile(path, []byte(o.code), 0o644); err != nil {
			return fmt.Errorf("redteam.SaveMisses: %w", err)
		}
		o.Saved = path
		return nil
	}
	for i := range r.Classes {
		for j := range r.Classes[i].Tasks {
			o := &r.Classes[i].Tasks[j]
			if o.Miss != "" && o.Skipped == "" && o.Error == "" {
				if err := save(o, o.Class); err != nil {
					return err
				}
			}
		}
	}
	for j := range r.Controls {
		if o := &r.Controls[j]; o.Miss != "" && o.Error == "" {
			if err := save(o, "control"); err != nil {
				return err
			}
		}
	}
	return nil
}
