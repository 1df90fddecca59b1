package overview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText draws s as a terminal frame (kernelgate top); prev, when it is
// an earlier snapshot, gives the evaluation rate.
func WriteText(w io.Writer, s, prev Snapshot, source string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ready := "not ready"
	if s.Ready {
		ready = "ready"
	}
	if s.Health != "" {
		ready = s.Health
	}
	fmt.Fprintf(tw, "kernelgate  %s  %s  %s\n\n", source, s.Time.UTC().Format("15:04:05"), ready)
	rate := "–"
	if !prev.Time.IsZero() {
		rate = fmt.Sprintf("%.2f/s", s.Rate(prev))
	}
	fmt.Fprintf(tw, "queue\t%s\tverdicts\t%.0f (%s)\n", optional(s.QueueDepth, "%.0f"), s.Total(), rate)
	fmt.Fprintf(tw, "run p50/p99/max\t%s\tqueue wait p50/p99/max\t%s\n", s.Exec, s.QueueWait)
	var mix []string
	for _, st := range s.Statuses() {
		if n := s.Verdicts[st]; n > 0 {
			mix = append(mix, fmt.Sprintf("%s %.0f", st, n))
		}
	}
	if len(mix) == 0 {
		mix = []string{"none yet"}
	}
	fmt.Fprintf(tw, "by status\t%s\n", strings.Join(mix, "  "))
	writeVerdictDetail(tw, s)
	fmt.Fprintln(tw, "WORKER\tUP\tIN FLIGHT\tSLOTS")
	for _, wk := range s.Workers {
		fmt.Fprintf(tw, "%s\t%v\t%.0f\t%.0f\n", wk.Device, wk.Up, wk.InFlight, wk.Slots)
	}
	if len(s.Workers) == 0 {
		fmt.Fprintln(tw, "(no local worker)")
	}
	fmt.Fprintln(tw, "\nGPU\tNAME\tUTIL\tMEMORY\tIN FLIGHT")
	for _, g := range s.GPUs {
		util, used := "–", "–"
		if g.UtilizationPercent != nil {
			util = fmt.Sprintf("%d%%", *g.UtilizationPercent)
		}
		if g.MemoryUsedBytes != nil {
			used = fmt.Sprintf("%.1f", float64(*g.MemoryUsedBytes)/(1<<30))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s / %.1f GiB\t%d/%d\n", g.Index, g.Name, util, used, float64(g.MemoryTotalBytes)/(1<<30), g.InFlight, g.Concurrency)
	}
	if len(s.GPUs) == 0 {
		reason := s.GPUMode
		if s.GPUReason != "" {
			reason += ": " + s.GPUReason
		}
		fmt.Fprintf(tw, "(no GPU; %s)\n", reason)
	}
	for _, m := range s.Missing {
		fmt.Fprintf(tw, "not shown: %s\n", m)
	}
	return tw.Flush()
}

// Seconds writes a latency for a person: in ms below a second (a queue
// wait is a few), else in s; nil is "–".
func Seconds(v *float64) string {
	switch {
	case v == nil:
		return "–"
	case *v < 0.9995: // not "1e+03 ms"
		return fmt.Sprintf("%.3g ms", *v*1e3)
	case *v >= 100:
		return fmt.Sprintf("%.0f s", *v)
	}
	return fmt.Sprintf("%.3g s", *v)
}

func optional(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}
