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
	"github.com/kernelgate/kernelgate/harness"
)

// fakeEvaluator answers from a table keyed by code and tracks concurrency.
type fakeEvaluator struct {
	inFlight, peak atomic.Int32
	mu             sync.Mutex
	calls          int
}

func (f *fakeEvaluator) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.mu.Unlock()
	sp := 1.0 + float64(call%3)/10
	switch job.Code {
	case "good":
		return eval.Verdict{Status: eval.StatusCorrect, Speedup: &sp,
			Runtime: &eval.Runtime{MedianMS: 1}, RefRuntime: &eval.Runtime{MedianMS: sp},
			StageMS: map[string]float64{"fork": 2, "total": 100}}, nil
	case "wrong":
		return eval.Verdict{Status: eval.StatusIncorrect, Feedback: "trial 0 mismatch\nmore", HackFlags: []string{"decoy"},
			StageMS: map[string]float64{"fork": 4, "total": 300}}, nil
	case "badtask":
		return eval.Verdict{Status: eval.StatusHarnessError, TaskError: "SyntaxError: bad task"}, nil
	}
	return eval.Verdict{}, errors.New("no zygote is running")
}

func TestRun(t *testing.T) {
	items := []Item{
		{Task: eval.Task{Name: "1_add", Path: "/t/1_add.py"}, KernelFile: "/k/1_add.py", Code: "good"},
		{Task: eval.Task{Name: "2_mul", Path: "/t/2_mul.py"}, KernelFile: "/k/2_mul.py", Code: "wrong"},
		{Task: eval.Task{Name: "3_bad", Path: "/t/3_bad.py"}, KernelFile: "/k/3_bad.py", Code: "badtask"},
		{Task: eval.Task{Name: "4_x", Path: "/t/4_x.py"}, KernelFile: "/k/4_x.py", Code: "broken"},
	}
	ev := &fakeEvaluator{}
	rep, err := Run(context.Background(), ev, items, Options{Concurrency: 2, Repeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evals != 12 || len(rep.Rows) != 12 || rep.Partial {
		t.Fatalf("%d evals, %d rows", rep.Evals, len(rep.Rows))
	}
	if p := ev.peak.Load(); p > 2 {
		t.Errorf("peak concurrency %d > 2", p)
	}
	want := map[string]int{"correct": 3, "incorrect": 3, "harness_error": 3, "error": 3}
	for k, n := range want {
		if rep.Statuses[k] != n {
			t.Errorf("statuses %v, want %v", rep.Statuses, want)
			break
		}
	}
	if rep.StageMS["fork"] != 2 || rep.StageMS["total"] != 100 {
		t.Errorf("stage medians %v", rep.StageMS)
	}
	if len(rep.TaskErrors) != 1 || rep.TaskErrors[0].Path != "/t/3_bad.py" {
		t.Errorf("task errors %+v", rep.TaskErrors)
	}
	if len(rep.Spreads) != 1 || rep.Spreads[0].N != 3 || rep.Spreads[0].Ratio < 1 {
		t.Errorf("spreads %+v", rep.Spreads)
	}
	if rep.Rows[3].Feedback != "trial 0 mismatch" {
		t.Errorf("feedback first line: %q", rep.Rows[3].Feedback)
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"12 evaluations", "incorrect=3", "fork 2.0", "/t/3_bad.py: SyntaxError", "spread 1_add"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Evals != 12 {
		t.Errorf("JSON round trip: %v %+v", err, back.Evals)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	items := []Item{{Task: eval.Task{Name: "a"}, Code: "good"}}
	rep, err := Run(ctx, &fakeEvaluator{}, items, Options{Repeat: 100})
	if !errors.Is(err, context.Canceled) || rep == nil || rep.Evals > 1 || !rep.Partial {
		t.Fatalf("got %v, %+v", err, rep)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 3, 2, 4}
	for _, tt := range []struct{ q, want float64 }{{0.5, 3}, {0.99, 5}, {0, 1}} {
		if got := quantile(xs, tt.q); got != tt.want {
			t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("empty quantile")
	}
}

// Slot utilisation is the evaluations' time in a slot over slots × wall; the
// zygotes' slots cap the run's concurrency.
func TestSlotUtilisation(t *testing.T) {
	rows := []Row{{StageMS: map[string]float64{"total": 3000}}, {StageMS: map[string]float64{"total": 1000}}, {Error: "no zygote"}}
	for _, tt := range []struct {
		name    string
		conc    int
		zygotes []harness.ZygoteStats
		slots   int
		util    float64
	}{
		{"run's concurrency", 4, nil, 4, 4.0 / (4 * 2)},
		{"zygotes fewer than asked", 16, []harness.ZygoteStats{{Concurrency: 1}, {Concurrency: 1}}, 2, 4.0 / (2 * 2)},
		{"zygotes more than asked", 1, []harness.ZygoteStats{{Concurrency: 16}}, 1, 4.0 / 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Rows: rows, WallS: 2, Zygotes: tt.zygotes}
			r.setSlots(tt.conc)
			if r.Slots != tt.slots || math.Abs(r.SlotUtilisation-tt.util) > 1e-9 {
				t.Fatalf("slots %d utilisation %v; want %d, %v", r.Slots, r.SlotUtilisation, tt.slots, tt.util)
			}
		})
	}
}
