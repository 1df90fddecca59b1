package batch

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// Pass names in a Fidelity report.
const (
	PassFull = "full" // every zygote slot, or --concurrency N
	PassC1   = "c1"   // one evaluation at a time
)

// Fidelity is `kernelgate bench --fidelity`: the same items benched at full
// concurrency and at concurrency 1 in one process (one supervisor), and how
// far each kernel's median speedup moved between the two. A kernel's speedup
// should not depend on what else runs on the host; the ratio says whether it
// does.
//
// As JSON (`--json`) it is one object:
//
//	partial      true when Ctrl-C cut the run short; every figure covers only
//	             the evaluations that finished
//	repeat       evaluations of each kernel in each pass (--repeat)
//	percentile   "nearest-rank": how every median and percentile here is taken
//	             (the smallest value with at least q of the data at or below it)
//	passes       [full, c1], in the order they ran; each {name, concurrency,
//	             report}, where report is that pass's plain bench Report
//	             (evals_per_s, statuses, rows, zygotes, ...), null for a pass
//	             that never started (interrupted before it)
//	kernels      every compared kernel, in task order: task, kernel (file),
//	             n_full and n_c1 (speedups behind each median), speedup_full and
//	             speedup_c1 (median speedups), ratio (speedup_full ÷ speedup_c1),
//	             deviation (|ratio − 1|)
//	excluded     every kernel left out of the statistics, in task order: task,
//	             kernel, reason (speedup null: CPU timing not comparable; not
//	             correct in some repeat; not measured)
//	summary      compared and excluded (kernel counts); deviation_p50,
//	             deviation_p90, deviation_max (null when none compared);
//	             within_3pct and within_10pct (kernels with deviation ≤ 0.03,
//	             ≤ 0.10)
//	notes        plain-language remarks (nothing comparable; full concurrency 1)
type Fidelity struct {
	Partial    bool             `json:"partial"`
	Repeat     int              `json:"repeat"`
	Percentile string           `json:"percentile"`
	Passes     []Pass           `json:"passes"`
	Kernels    []KernelFidelity `json:"kernels"`
	Excluded   []Exclusion      `json:"excluded"`
	Summary    FidelitySummary  `json:"summary"`
	Notes      []string         `json:"notes"`
}

// Pass is one bench pass of a Fidelity run.
type Pass struct {
	Name        string  `json:"name"` // PassFull or PassC1
	Concurrency int     `json:"concurrency"`
	Report      *Report `json:"report"` // nil when the pass never started
}

// KernelFidelity is one kernel's speedup in both passes.
type KernelFidelity struct {
	Task        string  `json:"task"`
	Kernel      string  `json:"kernel"`
	NFull       int     `json:"n_full"`
	NC1         int     `json:"n_c1"`
	SpeedupFull float64 `json:"speedup_full"` // median over the full pass's repeats
	SpeedupC1   float64 `json:"speedup_c1"`   // median over the c1 pass's repeats
	Ratio       float64 `json:"ratio"`        // SpeedupFull / SpeedupC1
	Deviation   float64 `json:"deviation"`    // |Ratio − 1|
}

// Exclusion is a kernel with no speedup to compare, and why.
type Exclusion struct {
	Task   string `json:"task"`
	Kernel string `json:"kernel"`
	Reason string `json:"reason"`
}

// FidelitySummary is the statistics over the compared kernels.
type FidelitySummary struct {
	Compared     int      `json:"compared"`
	Excluded     int      `json:"excluded"`
	DeviationP50 *float64 `json:"deviation_p50"`
	DeviationP90 *float64 `json:"deviation_p90"`
	DeviationMax *float64 `json:"deviation_max"`
	Within3Pct   int      `json:"within_3pct"`
	Within10Pct  int      `json:"within_10pct"`
}

// RunFidelity benches items at opts.Concurrency, then at concurrency 1,
// through the same Evaluator, and compares the two. The error is ctx's when
// the run was cut short; the Fidelity is then partial (and says so).
//
// The full pass runs first. The c1 pass is the slow one (about concurrency
// times longer), so it is where a long run is most likely interrupted; with
// the full pass already done, every kernel the c1 pass reached is compared.
// The other order would leave nothing to compare. It also puts the host's
// warm-up (cold caches, GPU clocks ramping) in the pass under test rather
// than in the baseline, so it can only make the check stricter. Interleaving
// the passes repeat by repeat would spread slow drift over both, but with
// --repeat 1 it is the same order, and it would stop each pass's evals/s
// from describing a steady state.
func RunFidelity(ctx context.Context, ev Evaluator, items []Item, opts Options) (*Fidelity, error) {
	full, c1 := opts, opts
	full.Concurrency, c1.Concurrency = max(opts.Concurrency, 1), 1
	f := &Fidelity{Repeat: max(opts.Repeat, 1), Percentile: "nearest-rank", Passes: []Pass{
		{Name: PassFull, Concurrency: full.Concurrency},
		{Name: PassC1, Concurrency: 1},
	}}
	full.Label = fmt.Sprintf("%s pass, %d in flight", PassFull, full.Concurrency)
	c1.Label = PassC1 + " pass, 1 in flight"
	var err error
	f.Passes[0].Report, err = Run(ctx, ev, items, full)
	if err == nil {
		f.Passes[1].Report, err = Run(ctx, ev, items, c1)
	}
	f.Partial = err != nil
	f.compare(items)
	return f, err
}

// withinEps absorbs the rounding in ratio − 1, so that 1.03 ÷ 1 counts as
// within 3%.
const withinEps = 1e-9

// compare fills Kernels, Excluded, Summary and Notes from the passes'
// reports. Every item is either compared or excluded.
func (f *Fidelity) compare(items []Item) {
	f.Kernels, f.Excluded, f.Notes = []KernelFidelity{}, []Exclusion{}, []string{}
	var devs []float64
	for _, it := range items {
		k := pairKey{it.Task.Name, it.KernelFile}
		full, c1 := f.pass(PassFull).collect(k), f.pass(PassC1).collect(k)
		if reasons := join(full.reasons, c1.reasons); reasons != "" {
			f.Excluded = append(f.Excluded, Exclusion{Task: k.task, Kernel: k.kernel, Reason: reasons})
			continue
		}
		kf := KernelFidelity{Task: k.task, Kernel: k.kernel, NFull: len(full.speedups), NC1: len(c1.speedups),
			SpeedupFull: quantile(full.speedups, 0.5), SpeedupC1: quantile(c1.speedups, 0.5)}
		kf.Ratio = kf.SpeedupFull / kf.SpeedupC1
		kf.Deviation = math.Abs(kf.Ratio - 1)
		f.Kernels = append(f.Kernels, kf)
		devs = append(devs, kf.Deviation)
	}
	f.Summary = summarise(devs)
	f.Summary.Excluded = len(f.Excluded)
	if len(devs) == 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("no kernel is comparable: all %d excluded, so there are no fidelity figures", len(f.Excluded)))
	}
	if f.Passes[0].Concurrency == 1 {
		f.Notes = append(f.Notes, "full concurrency is 1: both passes ran one evaluation at a time, so this measures repeatability, not interference")
	}
}

func summarise(devs []float64) FidelitySummary {
	s := FidelitySummary{Compared: len(devs)}
	if len(devs) == 0 {
		return s
	}
	p50, p90, top := quantile(devs, 0.5), quantile(devs, 0.9), quantile(devs, 1)
	s.DeviationP50, s.DeviationP90, s.DeviationMax = &p50, &p90, &top
	for _, d := range devs {
		if d <= 0.03+withinEps {
			s.Within3Pct++
		}
		if d <= 0.10+withinEps {
			s.Within10Pct++
		}
	}
	return s
}

func (f *Fidelity) pass(name string) Pass {
	for _, p := range f.Passes {
		if p.Name == name {
			return p
		}
	}
	return Pass{Name: name}
}

type pairKey struct{ task, kernel string }

// measured is one kernel in one pass: its speedups, or why they don't count.
type measured struct {
	speedups []float64
	reasons  reasons
}

// collect gathers kernel k's rows of this pass. A kernel counts only when
// every repeat that finished was correct with a positive speedup.
func (p Pass) collect(k pairKey) measured {
	var m measured
	if p.Report != nil {
		for _, row := range p.Report.Rows {
			if (pairKey{row.Task, row.Kernel}) == k {
				m.add(p.Name, row)
			}
		}
	}
	if len(m.speedups) == 0 && len(m.reasons.order) == 0 {
		m.reasons.add("not measured in the "+p.Name+" pass (interrupted)", -1)
	}
	return m
}

func (m *measured) add(pass string, row Row) {
	in := " in the " + pass + " pass"
	switch {
	case row.Error != "":
		m.reasons.add("did not run"+in+": "+firstLine(row.Error), row.Repeat)
	case row.Status != string(eval.StatusCorrect):
		m.reasons.add(row.Status+in, row.Repeat)
	case row.Speedup == nil && row.TimingMode == eval.TimingCPUInterpreter:
		// The same in every row of a CPU run, so said once, without repeats.
		m.reasons.add("timing not comparable on CPU (timing_mode cpu_interpreter, speedup null)", -1)
	case row.Speedup == nil:
		m.reasons.add("no speedup"+in, row.Repeat)
	case *row.Speedup <= 0:
		m.reasons.add(fmt.Sprintf("speedup %g%s", *row.Speedup, in), row.Repeat)
	default:
		m.speedups = append(m.speedups, *row.Speedup)
	}
}

// reasons are distinct exclusion reasons in the order first seen, each
// with the repeats it happened in.
type reasons struct {
	order   []string
	repeats map[string][]int
}

// add records reason for a repeat; repeat < 0 records it without one.
func (r *reasons) add(reason string, repeat int) {
	if r.repeats == nil {
		r.repeats = map[string][]int{}
	}
	if _, ok := r.repeats[reason]; !ok {
		r.order = append(r.order, reason)
		r.repeats[reason] = []int{}
	}
	if repeat >= 0 {
		r.repeats[reason] = append(r.repeats[reason], repeat)
	}
}

// join writes the reasons of every pass as one line: "incorrect in the c1
// pass (repeats 0, 2); ...", a reason shared by passes once.
func join(passes ...reasons) string {
	var all reasons
	for _, p := range passes {
		for _, r := range p.order {
			if reps := p.repeats[r]; len(reps) == 0 {
				all.add(r, -1)
			} else {
				for _, n := range reps {
					all.add(r, n)
				}
			}
		}
	}
	parts := make([]string, 0, len(all.order))
	for _, r := range all.order {
		switch reps := all.repeats[r]; len(reps) {
		case 0:
			parts = append(parts, r)
		case 1:
			parts = append(parts, fmt.Sprintf("%s (repeat %d)", r, reps[0]))
		default:
			nums := make([]string, len(reps))
			for i, n := range reps {
				nums[i] = strconv.Itoa(n)
			}
			parts = append(parts, fmt.Sprintf("%s (repeats %s)", r, strings.Join(nums, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}
