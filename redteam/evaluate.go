package redteam

import (
	"context"
	"sync"

	"github.com/kernelgate/kernelgate/eval"
)

// Evaluator is what EvaluateAll needs of a harness.Supervisor.
type Evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
}

// EvaluateAll evaluates every case not skipped with opts, concurrency at a
// time, and calls done (when non-nil) after each. The error is ctx's when
// the run was cut short.
func EvaluateAll(ctx context.Context, ev Evaluator, cases []Case, opts eval.Options, concurrency int, done func()) ([]Result, error) {
	results := make([]Result, len(cases))
	queue := make(chan int)
	var wg sync.WaitGroup
	for range max(concurrency, 1) {
		wg.Go(func() {
			for i := range queue {
				v, err := ev.Evaluate(ctx, eval.Job{Task: cases[i].Task, Code: cases[i].Code, Options: opts})
				if err != nil {
					results[i].Err = err.Error()
				} else {
					results[i].Verdict = &v
				}
				if done != nil {
					done()
				}
			}
		})
	}
feed:
	for i, c := range cases {
		if c.Skip != "" {
			continue
		}
		select {
		case queue <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	return results, ctx.Err()
}
