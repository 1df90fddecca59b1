package history

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Windows are the windows View serves, by name.
var Windows = map[string]time.Duration{"1h": FineSpan, "24h": CoarseSpan}

// WindowNames are Windows' keys in order, for messages.
var WindowNames = []string{"1h", "24h"}

// histogramBins is how many bins a reward histogram has.
const histogramBins = 20

// maxTasks bounds the tasks a view lists (task ids are unbounded).
const maxTasks = 200

// View is the history over a window (schema History).
type View struct {
	Window string    `json:"window"`
	StepS  float64   `json:"step_s"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	// Evaluations and Verdicts are the window's totals.
	Evaluations int            `json:"evaluations"`
	Verdicts    map[string]int `json:"verdicts"`
	// Points are the steps that hold anything, oldest first.
	Points []Point `json:"points"`
	// Rewards are each reward function's distribution over the window.
	Rewards map[string]Histogram `json:"rewards"`
	// Tasks are the tasks evaluated in the window (minute resolution), most
	// evaluated first.
	Tasks []Task `json:"tasks"`
	// TasksTotal counts them all; Tasks holds the first maxTasks.
	TasksTotal int `json:"tasks_total"`
	// Rebuilt says what was read back from the evaluation log at start.
	Rebuilt Rebuilt `json:"rebuilt"`
}

// Point is one step.
type Point struct {
	T               time.Time              `json:"t"`
	Evaluations     int                    `json:"evaluations"`
	EvaluationsPerS float64                `json:"evaluations_per_s"`
	Verdicts        map[string]int         `json:"verdicts"`
	Rewards         map[string]RewardStats `json:"rewards"`
	QueueDepth      *float64               `json:"queue_depth"`
	QueueDepthMax   *float64               `json:"queue_depth_max"`
	GPUs            []GPUPoint             `json:"gpus"`
}

// RewardStats are one reward function's rewards in a step: the count and
// mean are exact; p10 and p90 are nearest-rank over the values kept (all
// of them up to 256 a step, a uniform sample beyond).
type RewardStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P10   float64 `json:"p10"`
	P90   float64 `json:"p90"`
}

// GPUPoint is one GPU's mean readings over a step (null: not read).
type GPUPoint struct {
	Index           int      `json:"index"`
	UtilPercent     *float64 `json:"utilization_percent"`
	MemoryUsedBytes *float64 `json:"memory_used_bytes"`
}

// Histogram is a reward function's rewards over the window in equal bins
// from Min to Max; Counts sum to Count (values kept as a sample weigh what
// they stand for, rounded).
type Histogram struct {
	Count  int       `json:"count"`
	Mean   float64   `json:"mean"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Edges  []float64 `json:"edges"`
	Counts []int     `json:"counts"`
}

// Task is one task over the window.
type Task struct {
	TaskHash    string         `json:"task_hash"`
	TaskID      string         `json:"task_id,omitempty"`
	TaskName    string         `json:"task_name"`
	Evaluations int            `json:"evaluations"`
	PassRate    float64        `json:"pass_rate"` // correct / evaluations
	HackRate    float64        `json:"hack_rate"` // reward_hack / evaluations
	HackFlags   map[string]int `json:"hack_flags"`
	// MedianSpeedup: over the timed correct runs (null: none timed).
	MedianSpeedup *float64  `json:"median_speedup"`
	LastAt        time.Time `json:"last_at"`
}

// Rebuilt is what Rebuild read from the log.
type Rebuilt struct {
	Done  bool      `json:"done"` // false while it reads, or when there is no log
	Rows  int       `json:"rows"`
	Files int       `json:"files"`
	MS    float64   `json:"ms"`
	At    time.Time `json:"at,omitzero"`
	Error string    `json:"error,omitempty"`
}

// View reads the history over window (a key of Windows).
func (h *History) View(window string) (View, error) {
	span, ok := Windows[window]
	if !ok {
		return View{}, fmt.Errorf("window must be one of %s, got %q", strings.Join(WindowNames, ", "), window)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	r := &h.coarse
	if span <= FineSpan {
		r = &h.fine
	}
	from := now.Truncate(r.step).Add(-span + r.step)
	v := View{Window: window, StepS: r.step.Seconds(), From: from, To: now, Verdicts: map[string]int{},
		Points: []Point{}, Rewards: map[string]Histogram{}, Tasks: []Task{}, Rebuilt: h.loaded}
	bs := r.since(from)
	pooled := map[string][]weighted{}
	for _, b := range bs {
		v.Points = append(v.Points, point(b, r.step))
		v.Evaluations += b.n
		for k, n := range b.statuses {
			v.Verdicts[k] += n
		}
		for fn, rs := range b.rewards {
			w := float64(rs.n) / float64(len(rs.sample))
			for _, x := range rs.sample {
				pooled[fn] = append(pooled[fn], weighted{x, w})
			}
		}
	}
	for fn, xs := range pooled {
		v.Rewards[fn] = histogram(xs)
	}
	v.Tasks = tasks(h.coarse.since(now.Truncate(CoarseStep).Add(-span + CoarseStep)))
	v.TasksTotal = len(v.Tasks)
	v.Tasks = v.Tasks[:min(len(v.Tasks), maxTasks)]
	return v, nil
}

func point(b *bucket, step time.Duration) Point {
	p := Point{T: b.start, Evaluations: b.n, EvaluationsPerS: float64(b.n) / step.Seconds(),
		Verdicts: maps.Clone(b.statuses), Rewards: map[string]RewardStats{}, QueueDepth: b.queue.mean(), GPUs: []GPUPoint{}}
	if b.queue.n > 0 {
		m := b.queue.max
		p.QueueDepthMax = &m
	}
	for fn, rs := range b.rewards {
		xs := slices.Sorted(slices.Values(rs.sample))
		p.Rewards[fn] = RewardStats{Count: rs.n, Mean: rs.sum / float64(rs.n), P10: rank(xs, 0.1), P90: rank(xs, 0.9)}
	}
	for _, i := range slices.Sorted(maps.Keys(b.gpus)) {
		g := b.gpus[i]
		p.GPUs = append(p.GPUs, GPUPoint{Index: i, UtilPercent: g.util.mean(), MemoryUsedBytes: g.mem.mean()})
	}
	return p
}

// rank is the nearest-rank quantile of sorted xs (not empty): one of them.
func rank(xs []float64, q float64) float64 {
	return xs[max(int(math.Ceil(q*float64(len(xs))))-1, 0)]
}

type weighted struct{ v, w float64 }

func histogram(xs []weighted) Histogram {
	h := Histogram{Min: math.Inf(1), Max: math.Inf(-1), Counts: make([]int, histogramBins)}
	var total, sum float64
	for _, x := range xs {
		h.Min, h.Max = math.Min(h.Min, x.v), math.Max(h.Max, x.v)
		total += x.w
		sum += x.v * x.w
	}
	width := (h.Max - h.Min) / histogramBins
	if width == 0 {
		width = 1.0 / histogramBins // one value: a bin of its own around it
		h.Min, h.Max = h.Min-0.5, h.Max+0.5
	}
	weights := make([]float64, histogramBins)
	for _, x := range xs {
		weights[min(int((x.v-h.Min)/width), histogramBins-1)] += x.w
	}
	for i := range histogramBins + 1 {
		h.Edges = append(h.Edges, h.Min+float64(i)*width)
	}
	for i, w := range weights {
		h.Counts[i] = int(math.Round(w))
		h.Count += h.Counts[i]
	}
	h.Mean = sum / total
	return h
}

// tasks sums the coarse buckets' per-task figures.
func tasks(bs []*bucket) []Task {
	type acc struct {
		Task
		correct, hacks int
		speedups       []float64
	}
	by := map[string]*acc{}
	for _, b := range bs {
		for hash, t := range b.tasks {
			a := by[hash]
			if a == nil {
				a = &acc{Task: Task{TaskHash: hash, HackFlags: map[string]int{}}}
				by[hash] = a
			}
			a.Evaluations += t.n
			a.correct += t.statuses["correct"]
			a.hacks += t.statuses["reward_hack"]
			for f, n := range t.flags {
				a.HackFlags[f] += n
			}
			a.speedups = append(a.speedups, t.speedups.sample...)
			if !t.last.Before(a.LastAt) {
				a.LastAt = t.last
				a.TaskName = cmp.Or(t.name, a.TaskName)
				a.TaskID = cmp.Or(t.id, a.TaskID)
			}
		}
	}
	out := make([]Task, 0, len(by))
	for _, a := range by {
		a.PassRate = float64(a.correct) / float64(a.Evaluations)
		a.HackRate = float64(a.hacks) / float64(a.Evaluations)
		if len(a.speedups) > 0 {
			slices.Sort(a.speedups)
			m := rank(a.speedups, 0.5)
			a.MedianSpeedup = &m
		}
		out = append(out, a.Task)
	}
	slices.SortFunc(out, func(a, b Task) int {
		return cmp.Or(cmp.Compare(b.Evaluations, a.Evaluations), a.LastAt.Compare(b.LastAt)*-1, cmp.Compare(a.TaskHash, b.TaskHash))
	})
	return out
}
