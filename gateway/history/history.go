package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// The two resolutions kept: the last hour at 5 s, the last day at a minute.
const (
	FineStep    = 5 * time.Second
	FineSpan    = time.Hour
	CoarseStep  = time.Minute
	CoarseSpan  = 24 * time.Hour
	maxNameLen  = 128 // task names and flags come from the sandboxed child
	maxFlags    = 16  // hack flags counted per verdict
	maxRewardFn = 32  // reward functions told apart; more share "other"
	// maxTasksPerStep bounds the tasks a minute tells apart (memory: a day
	// is 1,440 of them); the rest of that minute's count as otherTasks.
	maxTasksPerStep = 1000
	otherTasks      = "other"
)

// The statuses the task table counts (eval.StatusCorrect, eval.StatusRewardHack).
const (
	statusCorrect = "correct"
	statusHack    = "reward_hack"
)

// Eval is one evaluation as the history counts it.
type Eval struct {
	At        time.Time
	Status    string
	RewardFn  string   // "" for an evaluation no reward function scored
	Reward    *float64 // nil: no reward
	TaskHash  string
	TaskName  string
	TaskID    string // "" when not known (the gateway fills it from its registry)
	HackFlags []string
	Speedup   *float64
}

// GPU is one GPU's reading at a sample; nil fields: the driver did not say.
type GPU struct {
	Index           int
	UtilPercent     *float64
	MemoryUsedBytes *float64
}

// History is safe for concurrent use.
type History struct {
	mu     sync.Mutex
	fine   ring
	coarse ring
	now    func() time.Time
	rng    *rand.Rand
	fns    map[string]bool // reward functions seen, bounded by maxRewardFn
	loaded Rebuilt
	closed closedTasks // the task table's closed minutes (tasks.go)
}

// New returns an empty history on the clock now (nil: time.Now).
func New(now func() time.Time) *History {
	if now == nil {
		now = time.Now
	}
	return &History{
		fine: newRing(FineStep, int(FineSpan/FineStep)), coarse: newRing(CoarseStep, int(CoarseSpan/CoarseStep)),
		now: now, rng: rand.New(rand.NewPCG(1, 2)), fns: map[string]bool{},
	}
}

// Add counts one evaluation at e.At; one older than a day counts nowhere.
func (h *History) Add(e Eval) {
	e.TaskName, e.Status = clip(e.TaskName), clip(e.Status)
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	fn := h.rewardFn(e.RewardFn)
	for _, r := range []*ring{&h.fine, &h.coarse} {
		b := r.at(e.At, now)
		if b == nil {
			continue
		}
		b.n++
		b.statuses[e.Status]++
		if fn != "" && e.Reward != nil && finite(*e.Reward) {
			rs := b.rewards[fn]
			if rs == nil {
				rs = &reservoir{}
				b.rewards[fn] = rs
			}
			rs.add(*e.Reward, rewardSampleCap, h.rng)
		}
		if r == &h.coarse && e.TaskHash != "" {
			h.addTask(b, e)
			if b.start.Before(now.Truncate(CoarseStep)) {
				h.closed.valid = false // a closed minute changed (a rebuild, a late result)
			}
		}
	}
}

func (h *History) addTask(b *bucket, e Eval) {
	if b.tasks == nil {
		b.tasks = map[string]*taskAgg{}
	}
	t := b.tasks[e.TaskHash]
	if t == nil && len(b.tasks) >= maxTasksPerStep {
		e.TaskHash, e.TaskName, e.TaskID = otherTasks, otherTasks, ""
		t = b.tasks[otherTasks]
	}
	if t == nil {
		t = &taskAgg{}
		b.tasks[e.TaskHash] = t
	}
	t.n++
	switch e.Status {
	case statusCorrect:
		t.correct++
	case statusHack:
		t.hacks++
	}
	var seen []string
	for _, f := range e.HackFlags[:min(len(e.HackFlags), maxFlags)] {
		if f = clip(f); !slices.Contains(seen, f) {
			seen = append(seen, f)
			if t.flags == nil {
				t.flags = map[string]int{}
			}
			t.flags[f]++
		}
	}
	if e.Speedup != nil && finite(*e.Speedup) && *e.Speedup > 0 {
		t.speedups.add(*e.Speedup, speedupSampleCap, h.rng)
	}
	if !e.At.Before(t.last) {
		t.last = e.At
		if e.TaskName != "" {
			t.name = e.TaskName
		}
		if e.TaskID != "" {
			t.id = clip(e.TaskID)
		}
	}
}

// rewardFn bounds the reward functions told apart (names come from
// requests, checked against the registry, but a bound costs nothing).
func (h *History) rewardFn(fn string) string {
	if fn == "" || h.fns[fn] {
		return fn
	}
	if len(h.fns) >= maxRewardFn {
		return "other"
	}
	h.fns[fn] = true
	return fn
}

// Sample records the queue depth (nil: unknown) and the GPUs at t.
func (h *History) Sample(t time.Time, queue *float64, gpus []GPU) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	for _, r := range []*ring{&h.fine, &h.coarse} {
		b := r.at(t, now)
		if b == nil {
			continue
		}
		if queue != nil {
			b.queue.add(*queue)
		}
		for _, g := range gpus {
			gg := b.gpus[g.Index]
			if gg == nil {
				gg = &gpuGauge{}
				b.gpus[g.Index] = gg
			}
			if g.UtilPercent != nil {
				gg.util.add(*g.UtilPercent)
			}
			if g.MemoryUsedBytes != nil {
				gg.mem.add(*g.MemoryUsedBytes)
			}
		}
	}
}

func clip(s string) string {
	if r := []rune(s); len(r) > maxNameLen {
		return string(r[:maxNameLen])
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func sortByStart(bs []*bucket) {
	slices.SortFunc(bs, func(a, b *bucket) int { return a.start.Compare(b.start) })
}
