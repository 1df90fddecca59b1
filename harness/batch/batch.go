package batch

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// Evaluator is what Run needs of a harness.Supervisor.
type Evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
}

// Item is one (task, kernel) pair to evaluate.
type Item struct {
	Task       eval.Task
	KernelFile string
	Code       string
}

// Options control a run.
type Options struct {
	Concurrency int          // evaluations in flight; default 1
	Repeat      int          // evaluations per item; default 1
	Job         eval.Options // per-evaluation options; zero = defaults
	// Progress, when non-nil, receives a progress bar (the caller decides
	// whether it is a terminal and whether --json asked for silence).
	Progress io.Writer
	Label    string // the progress bar's description; default "evaluating"
}

// statser is what a harness.Supervisor offers beyond Evaluate: its zygote
// slots, which Run copies into the report when the Evaluator has them.
type statser interface {
	Stats() []harness.ZygoteStats
}

type result struct {
	item    int
	repeat  int
	verdict eval.Verdict
	err     error
	latency time.Duration
}

// Run evaluates every item Repeat times. It returns the report of what ran;
// the error is ctx's when the run was cut short (the report is then partial,
// and says so). With a Supervisor the report holds its zygote stats as they
// stand at the end of the run.
func Run(ctx context.Context, ev Evaluator, items []Item, opts Options) (*Report, error) {
	conc, repeat := max(opts.Concurrency, 1), max(opts.Repeat, 1)
	total := len(items) * repeat
	bar := newBar(opts.Progress, opts.Label, total)
	type work struct{ item, repeat int }
	queue := make(chan work)
	results := make(chan result, total)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for w := range queue {
				it := items[w.item]
				job := eval.Job{Task: it.Task, Code: it.Code, Options: opts.Job}
				t0 := time.Now()
				v, err := ev.Evaluate(ctx, job)
				results <- result{item: w.item, repeat: w.repeat, verdict: v, err: err, latency: time.Since(t0)}
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		})
	}
	start := time.Now()
feed:
	for r := range repeat {
		for i := range items {
			if ctx.Err() != nil {
				break feed // select would pick a ready send at random
			}
			select {
			case queue <- work{item: i, repeat: r}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(queue)
	wg.Wait()
	close(results)
	wall := time.Since(start)
	if bar != nil {
		_ = bar.Finish()
	}
	var all []result
	for r := range results {
		if errors.Is(r.err, context.Canceled) || errors.Is(r.err, context.DeadlineExceeded) {
			continue // cut short, not evaluated
		}
		all = append(all, r)
	}
	rep := buildReport(items, all, wall)
	rep.Partial = ctx.Err() != nil
	if s, ok := ev.(statser); ok {
		rep.Zygotes = s.Stats()
	}
	rep.setSlots(conc)
	return rep, ctx.Err()
}

func newBar(w io.Writer, label string, total int) *progressbar.ProgressBar {
	if w == nil {
		return nil
	}
	if label == "" {
		label = "evaluating"
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)
}
