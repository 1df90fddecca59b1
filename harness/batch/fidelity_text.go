package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteJSON writes the fidelity report as one indented JSON object.
func (f *Fidelity) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// WriteText writes the per-kernel table, the exclusions, the summary and one
// line per pass.
func (f *Fidelity) WriteText(w io.Writer) error {
	full := f.pass(PassFull)
	if f.Partial {
		fmt.Fprintf(w, "PARTIAL REPORT: interrupted in the %s pass; only the evaluations that finished are counted\n", f.interruptedIn())
	}
	fmt.Fprintf(w, "fidelity: median speedup with %d in flight (full) and with 1 (c1), %d repeat(s) per pass; ratio = full / c1; medians and percentiles nearest-rank\n\n",
		full.Concurrency, f.Repeat)
	if len(f.Kernels) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tKERNEL\tN full/c1\tFULL\tC1\tRATIO\t|RATIO-1|")
		for _, k := range f.Kernels {
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.3fx\t%.3fx\t%.4f\t%s\n", k.Task, baseName(k.Kernel),
				k.NFull, k.NC1, k.SpeedupFull, k.SpeedupC1, k.Ratio, pct(k.Deviation))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if len(f.Excluded) > 0 {
		fmt.Fprintf(w, "excluded from the statistics (%d):\n", len(f.Excluded))
		for _, e := range f.Excluded {
			fmt.Fprintf(w, "  %s / %s: %s\n", e.Task, baseName(e.Kernel), e.Reason)
		}
		fmt.Fprintln(w)
	}
	if s := f.Summary; s.Compared > 0 {
		fmt.Fprintf(w, "compared %d of %d kernels: |ratio-1| p50 %s, p90 %s, max %s; within ±3%%: %d/%d, within ±10%%: %d/%d\n",
			s.Compared, s.Compared+s.Excluded, pct(*s.DeviationP50), pct(*s.DeviationP90), pct(*s.DeviationMax),
			s.Within3Pct, s.Compared, s.Within10Pct, s.Compared)
	}
	for _, n := range f.Notes {
		fmt.Fprintln(w, n)
	}
	var last *Report
	for _, p := range f.Passes {
		if p.Report == nil {
			fmt.Fprintf(w, "%s pass (%d in flight): not run\n", p.Name, p.Concurrency)
			continue
		}
		r := p.Report
		fmt.Fprintf(w, "%s pass (%d in flight): %d evaluations in %.1f s, %.2f evals/s, latency p50 %.0f ms; statuses: %s\n",
			p.Name, p.Concurrency, r.Evals, r.WallS, r.EvalsPerSec, r.LatencyP50MS, joinCounts(r.Statuses))
		last = r
	}
	if last != nil {
		last.writeFooter(w)
	}
	return nil
}

// interruptedIn names the pass Ctrl-C cut short: the last one that started.
func (f *Fidelity) interruptedIn() string {
	name := PassFull
	for _, p := range f.Passes {
		if p.Report != nil {
			name = p.Name
		}
	}
	return name
}

func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
