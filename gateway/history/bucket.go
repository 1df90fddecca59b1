package history

import (
	"math/rand/v2"
	"time"
)

// sampleCap bounds the values a bucket keeps of one reward function's
// rewards (and of one task's speedups): beyond it a reservoir keeps a
// uniform sample, so quantiles read from it are estimates, while counts
// and means stay exact.
const (
	rewardSampleCap  = 256
	speedupSampleCap = 32
)

// bucket is what happened in one step of time.
type bucket struct {
	start    time.Time // zero: never used
	n        int
	statuses map[string]int
	rewards  map[string]*reservoir // by reward function
	queue    gauge
	gpus     map[int]*gpuGauge
	tasks    map[string]*taskAgg // by task hash; kept in the coarse ring only
	// point is the bucket as a view shows it, kept until the bucket is
	// written again: a day's view reads 1,440 buckets, most long closed.
	point *Point
}

func (b *bucket) reset(start time.Time) {
	*b = bucket{start: start, statuses: map[string]int{}, rewards: map[string]*reservoir{}, gpus: map[int]*gpuGauge{}}
}

// reservoir is a count, a sum and a bounded uniform sample of values.
type reservoir struct {
	n      int
	sum    float64
	sample []float64
}

func (r *reservoir) add(v float64, limit int, rng *rand.Rand) {
	r.n++
	r.sum += v
	if len(r.sample) < limit {
		r.sample = append(r.sample, v)
		return
	}
	if i := rng.IntN(r.n); i < limit {
		r.sample[i] = v
	}
}

// gauge is the mean and maximum of samples of one reading.
type gauge struct {
	n        int
	sum, max float64
}

func (g *gauge) add(v float64) {
	if g.n == 0 || v > g.max {
		g.max = v
	}
	g.n++
	g.sum += v
}

func (g gauge) mean() *float64 {
	if g.n == 0 {
		return nil
	}
	m := g.sum / float64(g.n)
	return &m
}

type gpuGauge struct{ util, mem gauge }

// taskAgg is one task's evaluations in a bucket. It counts what the
// task table shows, no more: a day's view sums a bucket per minute per
// task, so each map here costs.
type taskAgg struct {
	name, id       string
	n              int
	correct, hacks int
	flags          map[string]int // nil until a flag is seen
	speedups       reservoir
	last           time.Time
}

// ring is buckets of one step covering len(buckets) steps back from now.
type ring struct {
	step    time.Duration
	buckets []bucket
	closed  closedRewards // histograms.go
}

func newRing(step time.Duration, n int) ring { return ring{step: step, buckets: make([]bucket, n)} }

// at is the bucket of t, for a write: reset when it held an older step;
// nil when t is older than the ring reaches back from now.
func (r *ring) at(t, now time.Time) *bucket {
	start := t.Truncate(r.step)
	span := r.step * time.Duration(len(r.buckets))
	if !start.After(now.Truncate(r.step).Add(-span)) || start.After(now.Add(r.step)) {
		return nil
	}
	b := &r.buckets[int(start.Unix()/int64(r.step/time.Second))%len(r.buckets)]
	if !b.start.Equal(start) {
		if b.start.After(start) {
			return nil // the slot holds a newer step: t is too old for it
		}
		b.reset(start)
	}
	b.point = nil // the caller writes to it
	if start.Before(now.Truncate(r.step)) {
		r.closed.valid = false // a closed step changes (a rebuild, a late result, a load)
	}
	return b
}

// since are the buckets from `from` on that hold data, oldest first.
func (r *ring) since(from time.Time) []*bucket {
	var out []*bucket
	for i := range r.buckets {
		if b := &r.buckets[i]; !b.start.IsZero() && !b.start.Before(from) {
			out = append(out, b)
		}
	}
	sortByStart(out)
	return out
}
