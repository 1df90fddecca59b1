package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

// The percentile used by every fidelity figure is nearest-rank: the
// smallest value with at least q of the data at or below it.
func TestQuantileNearestRank(t *testing.T) {
	ten := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"p50 of 10 is the 5th", ten, 0.5, 5},
		{"p90 of 10 is the 9th", ten, 0.9, 9},
		{"p91 of 10 is the 10th", ten, 0.91, 10},
		{"max", ten, 1, 10},
		{"min", ten, 0, 1},
		{"median of 2 is the lower", []float64{2, 1}, 0.5, 1},
		{"median of 3", []float64{1.2, 1.0, 1.1}, 0.5, 1.1},
		{"one value", []float64{0.7}, 0.9, 0.7},
		{"none", nil, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.xs, tt.q); got != tt.want {
				t.Errorf("quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
	if ten[0] != 10 {
		t.Error("quantile sorted its input in place")
	}
}

func sp(x float64) *float64 { return &x }

// gpuRow is a correct GPU verdict's row; cpuRow a CPU one (speedup null).
func gpuRow(task string, repeat int, speedup float64) Row {
	return Row{Task: task, Kernel: "/k/" + task + ".py", Repeat: repeat, Status: "correct", Speedup: sp(speedup), TimingMode: eval.TimingGPU}
}

func cpuRow(task string) Row {
	return Row{Task: task, Kernel: "/k/" + task + ".py", Status: "correct", TimingMode: eval.TimingCPUInterpreter}
}

func fidelityItems(names ...string) []Item {
	var items []Item
	for _, n := range names {
		items = append(items, Item{Task: eval.Task{Name: n}, KernelFile: "/k/" + n + ".py"})
	}
	return items
}

func fidelityOf(conc int, full, c1 []Row) *Fidelity {
	f := &Fidelity{Passes: []Pass{{Name: PassFull, Concurrency: conc, Report: &Report{Rows: full}}, {Name: PassC1, Concurrency: 1}}}
	if c1 != nil {
		f.Passes[1].Report = &Report{Rows: c1}
	}
	return f
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func nearPtr(p *float64, want float64) bool { return p != nil && near(*p, want) }

func TestFidelityCompare(t *testing.T) {
	type kernel struct {
		task             string
		full, c1, ratio  float64
		nFull, nC1       int
		deviation        float64
		excludedContains string // non-empty: excluded, with this in the reason
	}
	tests := []struct {
		name                        string
		conc                        int
		full, c1                    []Row
		want                        []kernel
		compared, within3, within10 int
		p50, p90, top               float64
		noteContains                string
	}{
		{
			name: "ratios of medians, boundaries of 3% and 10% included",
			conc: 16,
			full: []Row{gpuRow("a", 0, 1.2), gpuRow("a", 1, 1.0), gpuRow("a", 2, 1.1), gpuRow("b", 0, 2), gpuRow("c", 0, 0.97)},
			c1:   []Row{gpuRow("a", 0, 1.0), gpuRow("a", 1, 1.0), gpuRow("a", 2, 1.0), gpuRow("b", 0, 2), gpuRow("c", 0, 1)},
			want: []kernel{
				{task: "a", full: 1.1, c1: 1, ratio: 1.1, nFull: 3, nC1: 3, deviation: 0.1},
				{task: "b", full: 2, c1: 2, ratio: 1, nFull: 1, nC1: 1},
				{task: "c", full: 0.97, c1: 1, ratio: 0.97, nFull: 1, nC1: 1, deviation: 0.03},
			},
			compared: 3, within3: 2, within10: 3, p50: 0.03, p90: 0.1, top: 0.1,
		},
		{
			name: "exclusions: not correct in one repeat, could not run, no speedup",
			conc: 4,
			full: []Row{gpuRow("ok", 0, 1.5), gpuRow("ok", 1, 1.5),
				gpuRow("wrong", 0, 1), gpuRow("wrong", 1, 1),
				{Task: "err", Kernel: "/k/err.py", Error: "no zygote is running\ndetail"}, {Task: "err", Kernel: "/k/err.py", Repeat: 1, Error: "no zygote is running\ndetail"},
				{Task: "nosp", Kernel: "/k/nosp.py", Status: "correct", TimingMode: eval.TimingGPU}, gpuRow("nosp", 1, 1)},
			c1: []Row{gpuRow("ok", 0, 1.2), gpuRow("ok", 1, 1.2),
				gpuRow("wrong", 0, 1), {Task: "wrong", Kernel: "/k/wrong.py", Repeat: 1, Status: "incorrect", Speedup: sp(3)},
				gpuRow("err", 0, 1), gpuRow("err", 1, 1),
				gpuRow("nosp", 0, 1), gpuRow("nosp", 1, 1)},
			want: []kernel{
				{task: "ok", full: 1.5, c1: 1.2, ratio: 1.25, nFull: 2, nC1: 2, deviation: 0.25},
				{task: "wrong", excludedContains: "incorrect in the c1 pass (repeat 1)"},
				{task: "err", excludedContains: "did not run in the full pass: no zygote is running (repeats 0, 1)"},
				{task: "nosp", excludedContains: "no speedup in the full pass (repeat 0)"},
			},
			compared: 1, within3: 0, within10: 0, p50: 0.25, p90: 0.25, top: 0.25,
		},
		{
			name: "all excluded on CPU: said once per kernel, no figures",
			conc: 2,
			full: []Row{cpuRow("a"), cpuRow("b")},
			c1:   []Row{cpuRow("a"), cpuRow("b")},
			want: []kernel{
				{task: "a", excludedContains: "timing not comparable on CPU"},
				{task: "b", excludedContains: "timing not comparable on CPU"},
			},
			noteContains: "no kernel is comparable: all 2 excluded",
		},
		{
			name: "interrupted in the c1 pass: what both passes reached is compared",
			conc: 8,
			full: []Row{gpuRow("a", 0, 1), gpuRow("b", 0, 1)},
			c1:   []Row{gpuRow("a", 0, 1)},
			want: []kernel{
				{task: "a", full: 1, c1: 1, ratio: 1, nFull: 1, nC1: 1},
				{task: "b", excludedContains: "not measured in the c1 pass (interrupted)"},
			},
			compared: 1, within3: 1, within10: 1,
		},
		{
			name:         "c1 pass never started",
			conc:         8,
			full:         []Row{gpuRow("a", 0, 1)},
			want:         []kernel{{task: "a", excludedContains: "not measured in the c1 pass"}},
			noteContains: "no kernel is comparable",
		},
		{
			name:     "full concurrency 1 is said",
			conc:     1,
			full:     []Row{gpuRow("a", 0, 1)},
			c1:       []Row{gpuRow("a", 0, 1)},
			want:     []kernel{{task: "a", full: 1, c1: 1, ratio: 1, nFull: 1, nC1: 1}},
			compared: 1, within3: 1, within10: 1,
			noteContains: "measures repeatability, not interference",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, k := range tt.want {
				names = append(names, k.task)
			}
			f := fidelityOf(tt.conc, tt.full, tt.c1)
			f.compare(fidelityItems(names...))
			if len(f.Kernels)+len(f.Excluded) != len(tt.want) {
				t.Fatalf("%d compared + %d excluded, want %d kernels: %+v %+v", len(f.Kernels), len(f.Excluded), len(tt.want), f.Kernels, f.Excluded)
			}
			var ki, ei int
			for _, w := range tt.want {
				if w.excludedContains != "" {
					e := f.Excluded[ei]
					ei++
					if e.Task != w.task || !strings.Contains(e.Reason, w.excludedContains) {
						t.Errorf("excluded %+v, want %s with %q", e, w.task, w.excludedContains)
					}
					continue
				}
				k := f.Kernels[ki]
				ki++
				if k.Task != w.task || k.Kernel != "/k/"+w.task+".py" || !near(k.SpeedupFull, w.full) || !near(k.SpeedupC1, w.c1) ||
					!near(k.Ratio, w.ratio) || !near(k.Deviation, w.deviation) || k.NFull != w.nFull || k.NC1 != w.nC1 {
					t.Errorf("kernel %+v, want %+v", k, w)
				}
			}
			s := f.Summary
			if s.Compared != tt.compared || s.Excluded != len(f.Excluded) || s.Within3Pct != tt.within3 || s.Within10Pct != tt.within10 {
				t.Errorf("summary %+v", s)
			}
			if tt.compared == 0 && (s.DeviationP50 != nil || s.DeviationP90 != nil || s.DeviationMax != nil) {
				t.Errorf("percentiles of nothing: %+v", s)
			}
			if tt.compared > 0 && (!nearPtr(s.DeviationP50, tt.p50) || !nearPtr(s.DeviationP90, tt.p90) || !nearPtr(s.DeviationMax, tt.top)) {
				t.Errorf("deviation p50 %v p90 %v max %v, want %v %v %v", *s.DeviationP50, *s.DeviationP90, *s.DeviationMax, tt.p50, tt.p90, tt.top)
			}
			notes := strings.Join(f.Notes, "\n")
			if tt.noteContains != "" && !strings.Contains(notes, tt.noteContains) || tt.noteContains == "" && notes != "" {
				t.Errorf("notes %q, want %q", notes, tt.noteContains)
			}
		})
	}
}

// phaseEvaluator answers speedup 0.9 for the first n calls and 1.0 after,
// as a host where a crowded GPU slowed candidates would; it records how many
// evaluations were in flight at each call and can cancel at call cancelAt.
type phaseEvaluator struct {
	n, cancelAt int
	cancel      context.CancelFunc
	inFlight    atomic.Int32
	mu          sync.Mutex
	seen        []int32 // in flight, per call in call order
}

func (p *phaseEvaluator) Evaluate(_ context.Context, job eval.Job) (eval.Verdict, error) {
	in := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	p.mu.Lock()
	p.seen = append(p.seen, in)
	call := len(p.seen)
	p.mu.Unlock()
	if call == p.cancelAt {
		p.cancel() // this evaluation still finishes; the next ones don't start
	}
	x := 1.0
	if call <= p.n {
		x = 0.9
	}
	return eval.Verdict{Status: eval.StatusCorrect, Speedup: &x, TimingMode: eval.TimingGPU}, nil
}

func TestRunFidelity(t *testing.T) {
	items := fidelityItems("a", "b", "c", "d")
	ev := &phaseEvaluator{n: 8}
	f, err := RunFidelity(context.Background(), ev, items, Options{Concurrency: 3, Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if f.Partial || f.Repeat != 2 || f.Percentile != "nearest-rank" || len(f.Passes) != 2 ||
		f.Passes[0].Name != PassFull || f.Passes[0].Concurrency != 3 || f.Passes[1].Name != PassC1 || f.Passes[1].Concurrency != 1 {
		t.Fatalf("fidelity %+v", f)
	}
	for i, in := range ev.seen[8:] {
		if in != 1 {
			t.Fatalf("c1 call %d saw %d in flight", i, in)
		}
	}
	// The full pass ran first, so it got the slow speedups.
	if len(f.Kernels) != 4 || f.Summary.Compared != 4 || !near(f.Kernels[0].Ratio, 0.9) || f.Summary.Within10Pct != 4 || f.Summary.Within3Pct != 0 {
		t.Fatalf("kernels %+v summary %+v", f.Kernels, f.Summary)
	}
	var text, js bytes.Buffer
	if err := f.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"3 in flight (full)", "a.py", "0.900x", "1.000x", "0.9000", "10.00%",
		"compared 4 of 4 kernels", "within ±3%: 0/4, within ±10%: 4/4", "full pass (3 in flight): 8 evaluations", "c1 pass (1 in flight): 8 evaluations"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
	if strings.Contains(text.String(), "PARTIAL") {
		t.Errorf("complete run marked partial:\n%s", text.String())
	}
	if err := f.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"partial", "repeat", "percentile", "passes", "kernels", "excluded", "summary", "notes"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
}

// Ctrl-C in the c1 pass: the kernels it reached are compared, the rest
// excluded, and the report says it is partial.
func TestRunFidelityInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items := fidelityItems("a", "b", "c")
	ev := &phaseEvaluator{n: 3, cancelAt: 5, cancel: cancel}
	f, err := RunFidelity(ctx, ev, items, Options{Concurrency: 2})
	if !errors.Is(err, context.Canceled) || !f.Partial {
		t.Fatalf("err %v partial %v", err, f.Partial)
	}
	if len(f.Kernels) != 2 || len(f.Excluded) != 1 || f.Excluded[0].Task != "c" {
		t.Fatalf("kernels %+v excluded %+v", f.Kernels, f.Excluded)
	}
	var text bytes.Buffer
	_ = f.WriteText(&text)
	if !strings.HasPrefix(text.String(), "PARTIAL REPORT: interrupted in the c1 pass") || !strings.Contains(text.String(), "compared 2 of 3") {
		t.Fatalf("text:\n%s", text.String())
	}
}

// Ctrl-C before anything finished: still a report, every kernel excluded.
func TestRunFidelityCancelledAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f, err := RunFidelity(ctx, &phaseEvaluator{}, fidelityItems("a"), Options{Concurrency: 4})
	if !errors.Is(err, context.Canceled) || !f.Partial || f.Passes[1].Report != nil || len(f.Excluded) != 1 {
		t.Fatalf("err %v, %+v", err, f)
	}
	var text bytes.Buffer
	_ = f.WriteText(&text)
	for _, s := range []string{"PARTIAL REPORT: interrupted in the full pass", "not measured in the full pass", "no kernel is comparable", "c1 pass (1 in flight): not run"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
}
