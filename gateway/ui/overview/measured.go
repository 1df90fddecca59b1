package overview

import (
	"fmt"
	"math"
	"slices"
)

// Measured is the count, quantiles and maximum of values a gateway observed
// lately (seconds). The quantiles are nearest-rank: each is one of the
// values, so none lies above the maximum, as one interpolated from
// histogram buckets may. Nil figures: no value yet.
type Measured struct {
	Count int      `json:"count"`
	P50   *float64 `json:"p50"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
}

// MeasuredOf measures vals (sorted here; NaN and negative values are left out).
func MeasuredOf(vals []float64) Measured {
	xs := slices.DeleteFunc(slices.Clone(vals), func(v float64) bool { return math.IsNaN(v) || v < 0 })
	if len(xs) == 0 {
		return Measured{}
	}
	slices.Sort(xs)
	rank := func(q float64) *float64 {
		i := max(int(math.Ceil(q*float64(len(xs))))-1, 0)
		v := xs[i]
		return &v
	}
	return Measured{Count: len(xs), P50: rank(0.5), P99: rank(0.99), Max: &xs[len(xs)-1]}
}

// String is "p50 / p99 / max (n runs)", "–" before any.
func (m Measured) String() string {
	if m.Count == 0 {
		return "–"
	}
	runs := "runs"
	if m.Count == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%s / %s / %s (%d %s)", Seconds(m.P50), Seconds(m.P99), Seconds(m.Max), m.Count, runs)
}
