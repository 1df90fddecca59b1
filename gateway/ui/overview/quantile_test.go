package overview

import (
	"math"
	"testing"

	"github.com/prometheus/prometheus/promql"
)

// Quantile is held to Prometheus's own histogram_quantile on the same buckets.
func TestQuantileMatchesPrometheus(t *testing.T) {
	inf := math.Inf(1)
	for name, b := range map[string]Buckets{
		"spread":       {{0.1, 2}, {0.5, 10}, {1, 30}, {5, 31}, {inf, 31}},
		"one bucket":   {{1, 5}, {inf, 5}},
		"in +Inf":      {{0.1, 1}, {1, 2}, {inf, 100}},
		"empty lowest": {{0.001, 0}, {0.01, 0}, {0.1, 7}, {inf, 9}},
		"latency":      {{.001, 0}, {.005, 0}, {.01, 1}, {.025, 1}, {.05, 3}, {.1, 3}, {.25, 8}, {.5, 9}, {1, 20}, {2.5, 20}, {inf, 21}},
	} {
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99} {
			got, ok := b.Quantile(q)
			pb := make(promql.Buckets, len(b))
			for i, x := range b {
				pb[i] = promql.Bucket{UpperBound: x.UpperBound, Count: x.Count}
			}
			want, _, _, _, _, _ := promql.BucketQuantile(q, pb)
			if !ok || math.Abs(got-want) > 1e-9 {
				t.Errorf("%s q=%g: %g (ok %v), Prometheus says %g", name, q, got, ok, want)
			}
		}
	}
	if _, ok := (Buckets{{1, 0}, {math.Inf(1), 0}}).Quantile(0.5); ok {
		t.Error("a histogram without samples has a quantile")
	}
	if _, ok := (Buckets{{1, 3}}).Quantile(0.5); ok {
		t.Error("buckets without +Inf have a quantile")
	}
}
