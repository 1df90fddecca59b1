package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// report writes what rs say: counts, then each figure's p50 and p99 in ms.
// Queue wait, exec and overhead are of the uncached answers that carry both
// of the verdict's times.
func report(w io.Writer, mode string, rs []result, wall time.Duration) error {
	var trip, wait, exec, over, outside []float64
	codes, statuses, cached := map[int]int{}, map[string]int{}, 0
	for _, r := range rs {
		codes[r.status]++
		for _, s := range r.verdicts {
			statuses[s]++
		}
		if r.cached {
			cached++
		}
		ms := float64(r.latency.Microseconds()) / 1e3
		trip = append(trip, ms)
		if r.cached || r.queueMS == nil || r.execMS == nil {
			continue
		}
		wait = append(wait, *r.queueMS)
		exec = append(exec, *r.execMS)
		over = append(over, ms-*r.queueMS-*r.execMS)
		outside = append(outside, ms-*r.execMS)
	}
	fmt.Fprintf(w, "mode: %s\n", mode)
	fmt.Fprintf(w, "requests %d in %.2f s: %.1f req/s; HTTP %v; verdicts %v; cached %d\n",
		len(rs), wall.Seconds(), float64(len(rs))/wall.Seconds(), codes, statuses, cached)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ms\tp50\tp99\tn\t")
	row := func(name string, xs []float64) {
		if len(xs) > 0 {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d\t\n", name, q(xs, 0.5), q(xs, 0.99), len(xs))
		}
	}
	row("round trip", trip)
	row("queue wait (queue_wait_ms)", wait)
	row("exec (exec_ms)", exec)
	row("gateway overhead (round trip - queue wait - exec)", over)
	row("round trip - exec", outside)
	return tw.Flush()
}

// q is the nearest-rank p-quantile of xs.
func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(int(p*float64(len(s)-1)+0.5), len(s)-1)]
}
