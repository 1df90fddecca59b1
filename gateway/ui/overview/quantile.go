package overview

import (
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// Bucket is one cumulative histogram bucket: Count observations <= UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Buckets are a histogram's buckets in ascending bound order, +Inf last.
type Buckets []Bucket

// Quantile estimates the q-quantile (0 < q < 1) of a histogram the way
// Prometheus's histogram_quantile does: linear interpolation inside the
// bucket the rank falls in, the lowest bucket starting at 0, and the upper
// bound of the highest finite bucket when the rank falls in +Inf. It is
// written here rather than imported because the only implementation
// (promql.BucketQuantile) would pull the query engine into the binary;
// quantile_test.go holds it to that implementation.
func (b Buckets) Quantile(q float64) (float64, bool) {
	if len(b) < 2 || !math.IsInf(b[len(b)-1].UpperBound, 1) || q <= 0 || q >= 1 {
		return 0, false
	}
	total := b[len(b)-1].Count
	if total == 0 {
		return 0, false
	}
	rank := q * total
	i, _ := slices.BinarySearchFunc(b, rank, func(x Bucket, r float64) int {
		if x.Count < r {
			return -1
		}
		return 1 // first bucket whose count reaches the rank
	})
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound, true
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = b[i-1].UpperBound, b[i-1].Count
	} else if b[0].UpperBound <= 0 {
		return b[0].UpperBound, true
	}
	in := b[i].Count - below
	if in <= 0 {
		return b[i].UpperBound, true
	}
	return lower + (b[i].UpperBound-lower)*(rank-below)/in, true
}

// latencyOf reads a histogram without labels; an absent one is a zero Latency.
func latencyOf(fams map[string]*dto.MetricFamily, name string) Latency {
	ms := metricsOf(fams, name)
	if len(ms) == 0 || ms[0].Histogram == nil {
		return Latency{}
	}
	h := ms[0].Histogram
	b := make(Buckets, 0, len(h.Bucket)+1)
	for _, x := range h.Bucket {
		b = append(b, Bucket{UpperBound: x.GetUpperBound(), Count: float64(x.GetCumulativeCount())})
	}
	if len(b) == 0 || !math.IsInf(b[len(b)-1].UpperBound, 1) {
		b = append(b, Bucket{UpperBound: math.Inf(1), Count: float64(h.GetSampleCount())})
	}
	l := Latency{Count: float64(h.GetSampleCount())}
	if v, ok := b.Quantile(0.5); ok {
		l.P50 = &v
	}
	if v, ok := b.Quantile(0.99); ok {
		l.P99 = &v
	}
	return l
}
