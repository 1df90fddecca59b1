package history

import (
	"bytes"
	"encoding/json"
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

	// encoded is the point as JSON, for a closed step kept in its bucket:
	// a day's view is 1,440 points, and encoding them again at every poll
	// was most of its cost.
	encoded []byte
}

// plainPoint is Point without its MarshalJSON.
type plainPoint Point

// MarshalJSON is the point's kept encoding, when it has one.
func (p Point) MarshalJSON() ([]byte, error) {
	if p.encoded != nil {
		return p.encoded, nil
	}
	return json.Marshal(plainPoint(p))
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
	for _, b := range bs {
		if b.point == nil {
			p := point(b, r.step)
			p.encoded, _ = json.Marshal(plainPoint(p)) // cannot fail: numbers, strings and maps of them
			b.point = &p
		}
		v.Points = append(v.Points, *b.point)
		v.Evaluations += b.n
		for k, n := range b.statuses {
			v.Verdicts[k] += n
		}
	}
	v.Rewards = r.histograms(from, now.Truncate(r.step))
	v.Tasks = h.tasks(now.Truncate(CoarseStep).Add(-span+CoarseStep), now.Truncate(CoarseStep))
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

// pointsKey is how the points start in View's encoding: the first field
// of that name, and no string holds it unescaped.
const pointsKey = `"points":[]`

// JSON is json.Marshal(v), made faster: the points' kept encodings are
// copied in, where encoding/json would read each one again to check it.
func (v View) JSON() ([]byte, error) {
	pts := v.Points
	v.Points = []Point{}
	head, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("history.View.JSON: %w", err)
	}
	at := bytes.Index(head, []byte(pointsKey)) + len(pointsKey) - 1
	out := make([]byte, 0, len(head)+400*len(pts))
	out = append(out, head[:at]...)
	for i, p := range pts {
		if i > 0 {
			out = append(out, ',')
		}
		enc := p.encoded
		if enc == nil {
			if enc, err = json.Marshal(plainPoint(p)); err != nil {
				return nil, fmt.Errorf("history.View.JSON: %w", err)
			}
		}
		out = append(out, enc...)
	}
	return append(out, head[at:]...), nil
}
