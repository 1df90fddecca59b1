package history

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// taskSum is one task's figures summed over minutes.
type taskSum struct {
	Task
	correct, hacks int
	speedups       []float64 // sorted
}

func (a *taskSum) add(hash string, t *taskAgg) {
	a.TaskHash = hash
	a.Evaluations += t.n
	a.correct += t.correct
	a.hacks += t.hacks
	for f, n := range t.flags {
		if a.HackFlags == nil {
			a.HackFlags = map[string]int{}
		}
		a.HackFlags[f] += n
	}
	a.speedups = append(a.speedups, t.speedups.sample...)
	if !t.last.Before(a.LastAt) {
		a.LastAt = t.last
		a.TaskName = cmp.Or(t.name, a.TaskName)
		a.TaskID = cmp.Or(t.id, a.TaskID)
	}
}

func (a *taskSum) clone() *taskSum {
	c := *a
	c.HackFlags = maps.Clone(a.HackFlags)
	c.speedups = slices.Clone(a.speedups)
	return &c
}

// closedTasks is the task table over the minutes from `from` to `to`
// (exclusive: the current minute is summed at each view), kept while
// those minutes do not change: a day's view sums a bucket per task per
// minute, and all but the last are closed.
type closedTasks struct {
	valid    bool
	from, to time.Time
	tasks    map[string]*taskSum
}

// tasks is the task table over the coarse buckets from `from` on, cur
// being the current minute's start.
func (h *History) tasks(from, cur time.Time) []Task {
	c := &h.closed
	if !c.valid || !c.from.Equal(from) || !c.to.Equal(cur) {
		*c = closedTasks{valid: true, from: from, to: cur, tasks: map[string]*taskSum{}}
		for _, b := range h.coarse.since(from) {
			if b.start.Before(cur) {
				for hash, t := range b.tasks {
					sumOf(c.tasks, hash).add(hash, t)
				}
			}
		}
		for _, a := range c.tasks {
			slices.Sort(a.speedups)
		}
	}
	all := make(map[string]*taskSum, len(c.tasks))
	for hash, a := range c.tasks {
		all[hash] = a
	}
	for _, b := range h.coarse.since(cur) {
		for hash, t := range b.tasks {
			if a, ok := all[hash]; ok && a == c.tasks[hash] {
				all[hash] = a.clone() // the closed sum stays as it is
			}
			sumOf(all, hash).add(hash, t)
			slices.Sort(all[hash].speedups)
		}
	}
	out := make([]Task, 0, len(all))
	for _, a := range all {
		t := a.Task
		t.HackFlags = maps.Clone(a.HackFlags)
		if t.HackFlags == nil {
			t.HackFlags = map[string]int{}
		}
		t.PassRate = float64(a.correct) / float64(a.Evaluations)
		t.HackRate = float64(a.hacks) / float64(a.Evaluations)
		if len(a.speedups) > 0 {
			m := rank(a.speedups, 0.5)
			t.MedianSpeedup = &m
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Task) int {
		return cmp.Or(cmp.Compare(b.Evaluations, a.Evaluations), b.LastAt.Compare(a.LastAt), cmp.Compare(a.TaskHash, b.TaskHash))
	})
	return out
}

func sumOf(m map[string]*taskSum, hash string) *taskSum {
	a := m[hash]
	if a == nil {
		a = &taskSum{}
		m[hash] = a
	}
	return a
}
