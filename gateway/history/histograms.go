package history

import (
	"math"
	"time"
)

// closedRewards are each reward function's rewards over a ring's closed
// steps from `from` to `to` (exclusive), pooled and binned, kept while
// those steps do not change: a view then bins only the current step's.
type closedRewards struct {
	valid    bool
	from, to time.Time
	fns      map[string]*pool
}

// pool is a function's kept rewards, each weighing the values it stands
// for (a step's sample stands for all of the step's rewards), and their
// histogram between min and max.
type pool struct {
	n        int
	sum      float64
	min, max float64
	vals, ws []float64
	bins     []float64
}

func (p *pool) addStep(rs *reservoir) {
	p.n += rs.n
	p.sum += rs.sum
	w := float64(rs.n) / float64(len(rs.sample))
	for _, x := range rs.sample {
		p.min, p.max = math.Min(p.min, x), math.Max(p.max, x)
		p.vals = append(p.vals, x)
		p.ws = append(p.ws, w)
	}
}

// edges are the bins' bounds: one value gets a bin of its own around it.
func (p *pool) edges() (lo, width float64) {
	lo, hi := p.min, p.max
	if hi == lo {
		lo, hi = lo-0.5, hi+0.5
	}
	return lo, (hi - lo) / histogramBins
}

func (p *pool) bin() {
	p.bins = make([]float64, histogramBins)
	lo, width := p.edges()
	for i, x := range p.vals {
		p.bins[min(int((x-lo)/width), histogramBins-1)] += p.ws[i]
	}
}

func newPool() *pool { return &pool{min: math.Inf(1), max: math.Inf(-1)} }

// histograms are each reward function's rewards over the steps from
// `from` on, cur being the current step's start, in equal bins.
func (r *ring) histograms(from, cur time.Time) map[string]Histogram {
	c := &r.closed
	if !c.valid || !c.from.Equal(from) || !c.to.Equal(cur) {
		*c = closedRewards{valid: true, from: from, to: cur, fns: map[string]*pool{}}
		for _, b := range r.since(from) {
			if b.start.Before(cur) {
				for fn, rs := range b.rewards {
					poolOf(c.fns, fn).addStep(rs)
				}
			}
		}
		for _, p := range c.fns {
			p.bin()
		}
	}
	out := map[string]Histogram{}
	open := map[string]*pool{}
	for _, b := range r.since(cur) {
		for fn, rs := range b.rewards {
			poolOf(open, fn).addStep(rs)
		}
	}
	for fn, p := range c.fns {
		if o := open[fn]; o != nil {
			continue // merged below
		}
		out[fn] = p.histogram(p.bins)
	}
	for fn, o := range open {
		p := c.fns[fn]
		if p == nil {
			o.bin()
			out[fn] = o.histogram(o.bins)
			continue
		}
		merged := &pool{n: p.n + o.n, sum: p.sum + o.sum, min: math.Min(p.min, o.min), max: math.Max(p.max, o.max)}
		if merged.min == p.min && merged.max == p.max {
			// The open step's rewards fall in the closed steps' range: only they are binned.
			merged.bins = append([]float64(nil), p.bins...)
			lo, width := p.edges()
			for i, x := range o.vals {
				merged.bins[min(int((x-lo)/width), histogramBins-1)] += o.ws[i]
			}
		} else {
			merged.vals, merged.ws = append(append([]float64(nil), p.vals...), o.vals...), append(append([]float64(nil), p.ws...), o.ws...)
			merged.bin()
		}
		out[fn] = merged.histogram(merged.bins)
	}
	return out
}

func (p *pool) histogram(bins []float64) Histogram {
	lo, width := p.edges()
	h := Histogram{Mean: p.sum / float64(p.n), Min: lo, Max: lo + width*histogramBins, Counts: make([]int, histogramBins)}
	for i := range histogramBins + 1 {
		h.Edges = append(h.Edges, lo+float64(i)*width)
	}
	for i, w := range bins {
		h.Counts[i] = int(math.Round(w))
		h.Count += h.Counts[i]
	}
	return h
}

func poolOf(m map[string]*pool, fn string) *pool {
	p := m[fn]
	if p == nil {
		p = newPool()
		m[fn] = p
	}
	return p
}
