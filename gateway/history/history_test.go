package history

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func f(v float64) *float64 { return &v }

func TestCountsByStatusRewardAndStep(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	for i := range 6 {
		st := "correct"
		if i%5 == 0 {
			st = "incorrect"
		}
		h.Add(Eval{At: t0.Add(-time.Duration(i) * time.Second), Status: st, RewardFn: "binary", Reward: f(float64(i)), TaskHash: "sha256:a", TaskName: "a"})
	}
	h.Add(Eval{At: t0.Add(-2 * time.Hour), Status: "timeout", TaskHash: "sha256:b", TaskName: "b"}) // in the day, not the hour
	h.Add(Eval{At: t0.Add(-25 * time.Hour), Status: "timeout"})                                     // in neither
	v, err := h.View("1h")
	if err != nil {
		t.Fatal(err)
	}
	if v.Evaluations != 6 || v.Verdicts["correct"] != 4 || v.Verdicts["incorrect"] != 2 || v.Verdicts["timeout"] != 0 {
		t.Errorf("1h: %d evaluations, verdicts %v", v.Evaluations, v.Verdicts)
	}
	if v.StepS != 5 || len(v.Points) != 2 {
		t.Fatalf("1h: step %g, %d points: %+v", v.StepS, len(v.Points), v.Points)
	}
	// 11:59:55..59 holds i=1..5 (rewards 1..5), 12:00:00 holds i=0.
	p := v.Points[0]
	if !p.T.Equal(t0.Add(-5*time.Second)) || p.Evaluations != 5 || p.EvaluationsPerS != 1 {
		t.Errorf("first point %+v", p)
	}
	if r := p.Rewards["binary"]; r.Count != 5 || r.Mean != 3 || r.P10 != 1 || r.P90 != 5 {
		t.Errorf("rewards of the first point %+v, want 5, mean 3, p10 1, p90 5", r)
	}
	day, _ := h.View("24h")
	if day.Evaluations != 7 || day.Verdicts["timeout"] != 1 || day.StepS != 60 {
		t.Errorf("24h: %d evaluations, verdicts %v, step %g", day.Evaluations, day.Verdicts, day.StepS)
	}
	if len(day.Tasks) != 2 || day.Tasks[0].TaskHash != "sha256:a" || math.Abs(day.Tasks[0].PassRate-4.0/6) > 1e-12 {
		t.Errorf("tasks %+v", day.Tasks)
	}
	if _, err := h.View("7d"); err == nil || !strings.Contains(err.Error(), "1h, 24h") {
		t.Errorf("an unknown window: %v", err)
	}
}

// A step's slot is reused an hour (a day) later: what it held is gone.
func TestOldStepsLeave(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	h.Add(Eval{At: t0, Status: "correct"})
	c.t = t0.Add(FineSpan)
	h.Add(Eval{At: c.t, Status: "incorrect"}) // the same fine slot as t0
	v, _ := h.View("1h")
	if v.Evaluations != 1 || v.Verdicts["incorrect"] != 1 {
		t.Errorf("an hour on: %+v", v.Verdicts)
	}
	day, _ := h.View("24h")
	if day.Evaluations != 2 {
		t.Errorf("the day holds both: %d", day.Evaluations)
	}
	h.Add(Eval{At: t0.Add(-time.Minute), Status: "timeout"}) // older than the hour: the day only
	if v, _ := h.View("1h"); v.Evaluations != 1 {
		t.Errorf("an old evaluation counted in the hour: %d", v.Evaluations)
	}
	c.t = t0.Add(FineSpan + CoarseSpan + 2*time.Minute)
	if day, _ := h.View("24h"); day.Evaluations != 0 || len(day.Points) != 0 {
		t.Errorf("a day on: %d evaluations, %d points", day.Evaluations, len(day.Points))
	}
}

func TestTasksHackRatesAndSpeedup(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	add := func(st string, sp *float64, flags ...string) {
		h.Add(Eval{At: t0, Status: st, TaskHash: "sha256:t", TaskName: "t", TaskID: "ci/t", HackFlags: flags, Speedup: sp})
	}
	add("correct", f(1.0))
	add("correct", f(2.0))
	add("correct", f(3.0))
	add("reward_hack", nil, "thread", "thread", "decoy")
	add("compile_error", nil)
	v, _ := h.View("24h")
	if len(v.Tasks) != 1 {
		t.Fatalf("tasks %+v", v.Tasks)
	}
	tk := v.Tasks[0]
	if tk.Evaluations != 5 || tk.PassRate != 0.6 || tk.HackRate != 0.2 || tk.HackFlags["thread"] != 1 || tk.HackFlags["decoy"] != 1 ||
		tk.MedianSpeedup == nil || *tk.MedianSpeedup != 2 || tk.TaskID != "ci/t" || !tk.LastAt.Equal(t0) {
		t.Errorf("task %+v", tk)
	}
}

// Beyond what a step keeps, the mean and count stay exact and the
// quantiles lie within the observed values, near the true ones.
func TestRewardsBeyondTheSample(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	const n = 10000
	for i := range n {
		h.Add(Eval{At: t0, Status: "correct", RewardFn: "kevin", Reward: f(float64(i) / n)})
	}
	v, _ := h.View("1h")
	r := v.Points[0].Rewards["kevin"]
	if r.Count != n || math.Abs(r.Mean-0.49995) > 1e-9 {
		t.Errorf("count %d mean %g", r.Count, r.Mean)
	}
	if r.P10 < 0 || r.P90 > 1 || math.Abs(r.P10-0.1) > 0.06 || math.Abs(r.P90-0.9) > 0.06 {
		t.Errorf("p10 %g p90 %g, want near 0.1 and 0.9", r.P10, r.P90)
	}
	hist := v.Rewards["kevin"]
	if hist.Count < n-histogramBins || hist.Count > n+histogramBins || len(hist.Edges) != histogramBins+1 || hist.Min != r.P10-r.P10+hist.Min {
		t.Errorf("histogram %+v", hist)
	}
	sum := 0
	for _, k := range hist.Counts {
		sum += k
	}
	if sum != hist.Count {
		t.Errorf("bins sum to %d, count %d", sum, hist.Count)
	}
}

func TestHistogramOfOneValue(t *testing.T) {
	h := New(func() time.Time { return t0 })
	h.Add(Eval{At: t0, Status: "correct", RewardFn: "f", Reward: f(0.5)})
	h.Add(Eval{At: t0, Status: "correct", RewardFn: "f", Reward: f(0.5)})
	v, _ := h.View("1h")
	if r := v.Rewards["f"]; r.Count != 2 || r.Min >= 0.5 || r.Max <= 0.5 || r.Mean != 0.5 {
		t.Errorf("%+v", r)
	}
}

// What a view keeps of the closed steps (their points, task sums and
// reward bins) gives what a history built afresh from the same
// evaluations gives, after a late result in a closed step and new ones
// in and beyond the range seen so far.
func TestKeptViewsAgreeWithFreshOnes(t *testing.T) {
	c := &clock{t0}
	kept := New(c.now)
	var all []Eval
	add := func(e Eval) {
		kept.Add(e)
		all = append(all, e)
	}
	for i := range 600 {
		add(Eval{At: t0.Add(-time.Duration(i) * 7 * time.Second), Status: []string{"correct", "incorrect", "reward_hack"}[i%3],
			RewardFn: "f", Reward: f(float64(i % 17)), TaskHash: fmt.Sprint(i % 5), HackFlags: []string{"decoy"}[:i%3/2], Speedup: f(float64(i%7) + 1)})
	}
	check := func(when string) {
		t.Helper()
		fresh := New(c.now)
		for _, e := range all {
			fresh.Add(e)
		}
		for _, w := range WindowNames {
			got, _ := kept.View(w)
			want, _ := fresh.View(w)
			got.Rebuilt, want.Rebuilt = Rebuilt{}, Rebuilt{}
			a, _ := got.JSON()
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Errorf("%s, %s: kept and fresh views differ:\n%.600s\n%.600s", when, w, a, b)
			}
		}
	}
	check("at first")
	add(Eval{At: t0.Add(-30 * time.Minute), Status: "correct", RewardFn: "f", Reward: f(3), TaskHash: "0", Speedup: f(9)})
	check("after a late result")
	add(Eval{At: t0, Status: "correct", RewardFn: "f", Reward: f(5), TaskHash: "1"})
	check("after one in range")
	add(Eval{At: t0, Status: "correct", RewardFn: "f", Reward: f(99), TaskHash: "new"})
	check("after one beyond the range")
	c.t = t0.Add(2 * time.Minute)
	add(Eval{At: c.t, Status: "incorrect", RewardFn: "g", Reward: f(-1), TaskHash: "1"})
	check("minutes on")
}

func TestSamplesQueueAndGPUs(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	h.Sample(t0.Add(-4*time.Second), f(2), []GPU{{Index: 0, UtilPercent: f(50), MemoryUsedBytes: f(1 << 30)}})
	h.Sample(t0.Add(-3*time.Second), f(6), []GPU{{Index: 0, UtilPercent: f(100)}})
	h.Sample(t0, nil, nil)
	v, _ := h.View("1h")
	if len(v.Points) != 2 {
		t.Fatalf("points %+v", v.Points)
	}
	p := v.Points[0]
	if *p.QueueDepth != 4 || *p.QueueDepthMax != 6 || len(p.GPUs) != 1 || *p.GPUs[0].UtilPercent != 75 || *p.GPUs[0].MemoryUsedBytes != 1<<30 {
		t.Errorf("point %+v gpus %+v", p, p.GPUs)
	}
	if v.Points[1].QueueDepth != nil {
		t.Errorf("an unknown depth read as %v", *v.Points[1].QueueDepth)
	}
}

// Names from the sandboxed child and reward functions are bounded.
func TestBounds(t *testing.T) {
	h := New(func() time.Time { return t0 })
	long := strings.Repeat("x", 1000)
	for i := range maxRewardFn + 5 {
		h.Add(Eval{At: t0, Status: "correct", RewardFn: string(rune('a'+i%26)) + strings.Repeat("y", i), Reward: f(1), TaskHash: "h", TaskName: long})
	}
	v, _ := h.View("1h")
	if len(v.Rewards) != maxRewardFn+1 || v.Rewards["other"].Count != 5 {
		t.Errorf("%d reward functions, other %+v", len(v.Rewards), v.Rewards["other"])
	}
	day, _ := h.View("24h")
	if len([]rune(day.Tasks[0].TaskName)) != maxNameLen {
		t.Errorf("a task name of %d runes", len(day.Tasks[0].TaskName))
	}
	for i := range maxTasksPerStep + 10 {
		h.Add(Eval{At: t0, Status: "correct", TaskHash: fmt.Sprint("many", i)})
	}
	day, _ = h.View("24h")
	if day.TasksTotal != maxTasksPerStep+1 || len(day.Tasks) != maxTasks || day.Tasks[1].TaskHash != otherTasks || day.Tasks[1].Evaluations != 11 {
		t.Errorf("%d tasks told apart, the second %+v; want %d and the rest as %s", day.TasksTotal, day.Tasks[1], maxTasksPerStep+1, otherTasks)
	}
}

// The queue and GPU samples, in no log, survive a restart through Save and Load.
func TestSamplesSaveAndLoad(t *testing.T) {
	c := &clock{t0}
	h := New(c.now)
	h.Sample(t0.Add(-time.Minute), f(3), []GPU{{Index: 1, UtilPercent: f(40)}})
	path := t.TempDir() + "/history/samples.json"
	if err := h.Save(path); err != nil {
		t.Fatal(err)
	}
	again := New(c.now)
	if err := again.Load(path); err != nil {
		t.Fatal(err)
	}
	for _, w := range WindowNames {
		v, _ := again.View(w)
		if len(v.Points) != 1 || *v.Points[0].QueueDepth != 3 || *v.Points[0].GPUs[0].UtilPercent != 40 {
			t.Errorf("%s after a load: %+v", w, v.Points)
		}
	}
	if err := New(c.now).Load(t.TempDir() + "/none.json"); err != nil {
		t.Errorf("no file: %v", err)
	}
	os.WriteFile(path, []byte("{"), 0o644)
	if err := New(c.now).Load(path); err == nil {
		t.Error("a broken file loaded")
	}
}
