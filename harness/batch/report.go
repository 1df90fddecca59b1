package batch

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
)

// Report summarises a batch run.
type Report struct {
	// Partial is true when the run was cut short (Ctrl-C): the figures
	// cover only the evaluations that finished.
	Partial      bool               `json:"partial,omitempty"`
	Evals        int                `json:"evals"`
	WallS        float64            `json:"wall_s"`
	EvalsPerSec  float64            `json:"evals_per_s"`
	LatencyP50MS float64            `json:"latency_p50_ms"` // submit → verdict, per evaluation
	LatencyP99MS float64            `json:"latency_p99_ms"`
	StageMS      map[string]float64 `json:"stage_median_ms"` // median of each stage_ms key
	Statuses     map[string]int     `json:"statuses"`
	Rows         []Row              `json:"rows"`
	Spreads      []Spread           `json:"speedup_spreads,omitempty"` // with repeats
	TaskErrors   []TaskError        `json:"task_errors,omitempty"`
	// Zygote slots at the end of the run (when the Evaluator is a Supervisor).
	Zygotes []harness.ZygoteStats `json:"zygotes,omitempty"`
	// Slots is the evaluations that could run at once: the run's concurrency,
	// or the zygotes' slots when they are fewer. SlotUtilisation is the share of
	// slots × wall the evaluations held a slot (the sum of their verdicts'
	// stage_ms total): idle slots, a tail of long evaluations and time outside
	// the zygote all lower it.
	Slots           int     `json:"slots"`
	SlotUtilisation float64 `json:"slot_utilisation"`
	// Filled by the caller, which knows how the items were made.
	UnmatchedKernels []string `json:"unmatched_kernels,omitempty"` // "path: reason"
	UnmatchedTasks   []string `json:"unmatched_tasks,omitempty"`
}

// Row is one evaluation.
type Row struct {
	Task    string   `json:"task"`
	Kernel  string   `json:"kernel"`
	Repeat  int      `json:"repeat"`
	Status  string   `json:"status"` // "" when Error is set
	Speedup *float64 `json:"speedup"`
	// TimingMode is the verdict's: "gpu", or "cpu_interpreter" (speedup null).
	TimingMode string   `json:"timing_mode,omitempty"`
	RuntimeMS  *float64 `json:"runtime_median_ms"`
	RefMS      *float64 `json:"ref_median_ms"`
	Flags      []string `json:"hack_flags"`
	Feedback   string   `json:"feedback"` // first line
	LatencyMS  float64  `json:"latency_ms"`
	// StageMS is the verdict's stage breakdown: where this evaluation's time went.
	StageMS map[string]float64 `json:"stage_ms,omitempty"`
	// WallCheck is the judge's cross-check of the candidate's timer (GPU timing only).
	WallCheck *eval.WallCheck `json:"wall_check,omitempty"`
	Error     string          `json:"error,omitempty"` // the evaluation could not run
}

// Spread is the speedup spread of one (task, kernel) pair over repeats.
type Spread struct {
	Task   string  `json:"task"`
	Kernel string  `json:"kernel"`
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	Ratio  float64 `json:"max_over_min"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	// P90OverP10 is the repeatability figure the README reports (target ≤ 1.04).
	P90OverP10 float64 `json:"p90_over_p10"`
}

// TaskError is a task file that failed on its own (not the candidate's fault).
type TaskError struct {
	Task  string `json:"task"`
	Path  string `json:"path"`
	Error string `json:"error"`
}

func buildReport(items []Item, results []result, wall time.Duration) *Report {
	sort.Slice(results, func(i, j int) bool {
		a, b := results[i], results[j]
		return a.item < b.item || (a.item == b.item && a.repeat < b.repeat)
	})
	r := &Report{Evals: len(results), WallS: wall.Seconds(), StageMS: map[string]float64{}, Statuses: map[string]int{}}
	if wall > 0 {
		r.EvalsPerSec = float64(len(results)) / wall.Seconds()
	}
	var lat []float64
	stages := map[string][]float64{}
	speedups := map[int][]float64{}
	taskErr := map[string]bool{}
	for _, res := range results {
		it, v := items[res.item], res.verdict
		row := Row{Task: it.Task.Name, Kernel: it.KernelFile, Repeat: res.repeat, LatencyMS: ms(res.latency), Flags: []string{}}
		lat = append(lat, row.LatencyMS)
		if res.err != nil {
			row.Error = res.err.Error()
			r.Statuses["error"]++
			r.Rows = append(r.Rows, row)
			continue
		}
		row.Status, row.Speedup, row.Feedback = string(v.Status), v.Speedup, firstLine(v.Feedback)
		row.TimingMode = v.TimingMode
		row.StageMS, row.WallCheck = v.StageMS, v.WallCheck
		if v.HackFlags != nil {
			row.Flags = v.HackFlags
		}
		if v.Runtime != nil {
			row.RuntimeMS = &v.Runtime.MedianMS
		}
		if v.RefRuntime != nil {
			row.RefMS = &v.RefRuntime.MedianMS
		}
		r.Statuses[row.Status]++
		for k, x := range v.StageMS {
			stages[k] = append(stages[k], x)
		}
		if v.Speedup != nil {
			speedups[res.item] = append(speedups[res.item], *v.Speedup)
		}
		if v.TaskError != "" && !taskErr[it.Task.Path] {
			taskErr[it.Task.Path] = true
			r.TaskErrors = append(r.TaskErrors, TaskError{Task: it.Task.Name, Path: it.Task.Path, Error: firstLine(v.TaskError)})
		}
		r.Rows = append(r.Rows, row)
	}
	r.LatencyP50MS, r.LatencyP99MS = quantile(lat, 0.5), quantile(lat, 0.99)
	for k, xs := range stages {
		r.StageMS[k] = quantile(xs, 0.5)
	}
	r.Spreads = spreads(items, speedups)
	return r
}

func spreads(items []Item, speedups map[int][]float64) []Spread {
	var out []Spread
	for i := range items {
		xs := speedups[i]
		if len(xs) < 2 {
			continue
		}
		sort.Float64s(xs)
		s := Spread{Task: items[i].Task.Name, Kernel: items[i].KernelFile, N: len(xs),
			Min: xs[0], Median: quantile(xs, 0.5), Max: xs[len(xs)-1],
			P10: quantile(xs, 0.1), P90: quantile(xs, 0.9)}
		if s.Min > 0 {
			s.Ratio = s.Max / s.Min
			s.P90OverP10 = s.P90 / s.P10
		}
		out = append(out, s)
	}
	return out
}

// quantile is the nearest-rank quantile; 0 for no data.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes a human summary and the per-evaluation table.
func (r *Report) WriteText(w io.Writer) error {
	if r.Partial {
		fmt.Fprintln(w, "PARTIAL REPORT: interrupted; only the evaluations that finished are counted")
	}
	fmt.Fprintf(w, "%d evaluations in %.1f s: %.2f evals/s, latency p50 %.0f ms, p99 %.0f ms\n",
		r.Evals, r.WallS, r.EvalsPerSec, r.LatencyP50MS, r.LatencyP99MS)
	fmt.Fprintf(w, "slots: %d, utilisation %.0f%%\n", r.Slots, 100*r.SlotUtilisation)
	fmt.Fprintf(w, "statuses: %s\n", joinCounts(r.Statuses))
	fmt.Fprintf(w, "stage medians (ms): %s\n\n", joinStages(r.StageMS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tKERNEL\tSTATUS\tSPEEDUP\tRUNTIME ms\tREF ms\tFLAGS\tFEEDBACK")
	for _, row := range r.Rows {
		status := row.Status
		if row.Error != "" {
			status, row.Feedback = "error", row.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Task, baseName(row.Kernel), status,
			num(row.Speedup, "%.2fx"), num(row.RuntimeMS, "%.3f"), num(row.RefMS, "%.3f"),
			strings.Join(row.Flags, ","), clip(row.Feedback, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Spreads {
		fmt.Fprintf(w, "spread %s / %s: n=%d min %.2fx median %.2fx max %.2fx (p90/p10 %.3f, max/min %.3f)\n",
			s.Task, baseName(s.Kernel), s.N, s.Min, s.Median, s.Max, s.P90OverP10, s.Ratio)
	}
	r.writeFooter(w)
	return nil
}

// writeFooter writes the task errors, the unmatched files and the zygotes.
func (r *Report) writeFooter(w io.Writer) {
	if len(r.TaskErrors) > 0 {
		fmt.Fprintln(w, "\ntask errors:")
		for _, te := range r.TaskErrors {
			// The harness's task_error already names the file; don't say it twice.
			if strings.HasPrefix(te.Error, te.Path) {
				fmt.Fprintf(w, "  %s\n", te.Error)
			} else {
				fmt.Fprintf(w, "  %s: %s\n", te.Path, te.Error)
			}
		}
	}
	for _, k := range r.UnmatchedKernels {
		fmt.Fprintf(w, "unmatched kernel %s\n", k)
	}
	if len(r.UnmatchedTasks) > 0 {
		fmt.Fprintf(w, "tasks without a kernel: %s\n", strings.Join(r.UnmatchedTasks, ", "))
	}
	for _, z := range r.Zygotes {
		fmt.Fprintf(w, "zygote %s: %d jobs, %d restarts\n", z.Label, z.JobsDone, z.Restarts)
	}
}

func joinCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// stageOrder is the order stages happen in; unknown stages follow, sorted.
var stageOrder = []string{"fork", "reference", "load", "correctness", "timing", "checks", "total"}

func joinStages(m map[string]float64) string {
	var parts []string
	seen := map[string]bool{}
	for _, k := range stageOrder {
		if x, ok := m[k]; ok {
			parts, seen[k] = append(parts, fmt.Sprintf("%s %.1f", k, x)), true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func num(p *float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// setSlots fills Slots and SlotUtilisation for a run of conc evaluations in
// flight (after Zygotes, which may cap them).
func (r *Report) setSlots(conc int) {
	r.Slots = conc
	if len(r.Zygotes) > 0 {
		n := 0
		for _, z := range r.Zygotes {
			n += z.Concurrency
		}
		if n > 0 {
			r.Slots = min(conc, n)
		}
	}
	var heldMS float64
	for _, row := range r.Rows {
		heldMS += row.StageMS["total"]
	}
	if r.Slots > 0 && r.WallS > 0 {
		r.SlotUtilisation = heldMS / 1e3 / (float64(r.Slots) * r.WallS)
	}
}
