package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// heartbeatEvery is how long bench stays quiet off a terminal while no
// evaluation finishes: then it says how many are done and running.
const heartbeatEvery = 15 * time.Second

// lineProgress is bench's progress off a terminal, where no bar draws (CI
// logs, a pipe): a line on w per finished evaluation, and a heartbeat when
// none finished for a while. It wraps the Evaluator batch.Run is given.
type lineProgress struct {
	ev    evaluator
	w     io.Writer
	total int
	now   func() time.Time

	mu            sync.Mutex
	start, last   time.Time // the run's start; the last line
	done, running int
}

func newLineProgress(ev evaluator, w io.Writer, total int, now func() time.Time) *lineProgress {
	t := now()
	return &lineProgress{ev: ev, w: w, total: total, now: now, start: t, last: t}
}

// startLineProgress wraps ev in a lineProgress writing to w and starts its
// heartbeat; stop ends the heartbeat and waits for it.
func startLineProgress(ctx context.Context, ev evaluator, w io.Writer, total int) (lp *lineProgress, stop func()) {
	lp = newLineProgress(ev, w, total, time.Now)
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { lp.heartbeat(hctx, heartbeatEvery) })
	return lp, func() {
		cancel()
		wg.Wait()
	}
}

// Evaluate runs job and reports it, unless ctx cut it short (batch.Run
// drops those from the report too).
func (p *lineProgress) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	p.mu.Lock()
	p.running++
	p.mu.Unlock()
	t0 := p.now()
	v, err := p.ev.Evaluate(ctx, job)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	if err != nil && ctx.Err() != nil {
		return v, err
	}
	p.done++
	p.last = p.now()
	outcome := string(v.Status)
	if err != nil {
		outcome = "error: " + oneLine(err.Error())
	}
	fmt.Fprintf(p.w, "bench: %d/%d done at %s: %s %s (%.1f s)\n", p.done, p.total, p.last.Sub(p.start).Round(time.Second),
		job.Task.Name, outcome, p.last.Sub(t0).Seconds())
	return v, err
}

// Stats passes the supervisor's zygote slots through to batch.Run's report.
func (p *lineProgress) Stats() []harness.ZygoteStats {
	if s, ok := p.ev.(interface{ Stats() []harness.ZygoteStats }); ok {
		return s.Stats()
	}
	return nil
}

// heartbeat writes a line whenever every passes with no other line, until
// ctx ends; the caller owns it and waits for it to return.
func (p *lineProgress) heartbeat(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		if now := p.now(); now.Sub(p.last) >= every {
			p.last = now
			fmt.Fprintf(p.w, "bench: %d/%d done at %s, %d running\n", p.done, p.total, now.Sub(p.start).Round(time.Second), p.running)
		}
		p.mu.Unlock()
	}
}
