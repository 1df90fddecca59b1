package overview

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Known latencies in, every figure shown within the observed range and
// within 5% of the exact quantile (here: equal to it, nearest rank).
func TestMeasuredQuantilesAreObserved(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]float64{
		"one run":                   {0.715},
		"two runs":                  {0.5, 5.63},
		"a long tail":               {},
		"uniform 1..1000 ms, 2048x": {},
		"equal":                     {2, 2, 2, 2},
	}
	for i := 0; i < 999; i++ {
		cases["a long tail"] = append(cases["a long tail"], 0.05+rng.ExpFloat64()*0.1)
	}
	cases["a long tail"] = append(cases["a long tail"], 9.6)
	for i := 0; i < 2048; i++ {
		cases["uniform 1..1000 ms, 2048x"] = append(cases["uniform 1..1000 ms, 2048x"], 0.001+rng.Float64()*0.999)
	}
	for name, vals := range cases {
		m := MeasuredOf(vals)
		sorted := slices.Sorted(slices.Values(vals))
		lo, hi := sorted[0], sorted[len(sorted)-1]
		if m.Count != len(vals) || m.Max == nil || *m.Max != hi {
			t.Fatalf("%s: count %d max %v, want %d and %g", name, m.Count, m.Max, len(vals), hi)
		}
		for q, got := range map[float64]*float64{0.5: m.P50, 0.99: m.P99} {
			exact := sorted[max(int(math.Ceil(q*float64(len(sorted))))-1, 0)]
			if got == nil || *got < lo || *got > hi || math.Abs(*got-exact) > 0.05*exact {
				t.Errorf("%s: p%g = %v, want %g (observed %g..%g)", name, q*100, got, exact, lo, hi)
			}
		}
	}
	// One run of 0.715 s: p99 is that run, not a bucket's edge above it.
	if m := MeasuredOf([]float64{0.715}); *m.P99 != 0.715 {
		t.Errorf("p99 of one 0.715 s run: %g", *m.P99)
	}
	if m := MeasuredOf(nil); m.Count != 0 || m.P50 != nil || m.Max != nil {
		t.Errorf("no values: %+v", m)
	}
	if m := MeasuredOf([]float64{math.NaN(), -1, 3}); m.Count != 1 || *m.P50 != 3 {
		t.Errorf("NaN and negative values are not observations: %+v", m)
	}
}
