package ui

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// group is a batch's items as a GRPO group: a trainer's advantage of an
// item is its reward less the group's mean, and divided by the group's
// standard deviation where it normalises (GRPO; Dr. GRPO drops the
// division). Items still running are left out of both.
type group struct {
	N    int
	Mean float64
	Std  float64 // population standard deviation, as GRPO implementations take it
	Rows []groupRow
}

type groupRow struct {
	Index      int
	Reward     float64
	Advantage  float64  // reward − mean
	Normalised *float64 // advantage / std; nil when every reward is the same
}

// Group is b's items in so far as a group (N 0 before any).
func (b batchView) Group() group {
	var g group
	var sum float64
	for i, r := range b.Rewards {
		if r != nil {
			g.Rows = append(g.Rows, groupRow{Index: i, Reward: *r})
			sum += *r
		}
	}
	g.N = len(g.Rows)
	if g.N == 0 {
		return g
	}
	g.Mean = sum / float64(g.N)
	var ss float64
	for _, r := range g.Rows {
		ss += (r.Reward - g.Mean) * (r.Reward - g.Mean)
	}
	g.Std = math.Sqrt(ss / float64(g.N))
	for i := range g.Rows {
		g.Rows[i].Advantage = g.Rows[i].Reward - g.Mean
		if g.Std > 1e-12 {
			n := g.Rows[i].Advantage / g.Std
			g.Rows[i].Normalised = &n
		}
	}
	return g
}

// flags writes hack flag counts as "decoy 2, thread 1" (most first), "–" for none.
func flags(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	var out []string
	for _, k := range keys {
		if m[k] > 0 {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, ", ")
}
