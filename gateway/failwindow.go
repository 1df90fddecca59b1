package gateway

import "time"

// failBuckets is how finely a failure window slides. An exact sliding log
// would keep one timestamp per failure, limit of them per counter, and the
// limit is a flag; buckets keep a counter's memory fixed whatever the limit,
// at the price of a failure ceasing to count up to window/failBuckets
// before it is a whole window old.
const failBuckets = 10

// slidingCount counts events over the last failBuckets ticks (a tick is
// window/failBuckets long, counted from the Unix epoch).
type slidingCount struct {
	last int64 // the newest tick written
	n    [failBuckets]uint32
}

// advance forgets the buckets that have slid out of the window by tick.
func (s *slidingCount) advance(tick int64) {
	if tick <= s.last {
		return
	}
	if tick-s.last >= failBuckets {
		s.n = [failBuckets]uint32{}
	} else {
		for t := s.last + 1; t <= tick; t++ {
			s.n[bucket(t)] = 0
		}
	}
	s.last = tick
}

// add counts one event at tick and returns the count before it.
func (s *slidingCount) add(tick int64) int {
	s.advance(tick)
	before := s.count()
	if b := &s.n[bucket(tick)]; *b < ^uint32(0) {
		*b++
	}
	return before
}

func (s *slidingCount) count() int {
	total := 0
	for _, n := range s.n {
		total += int(n)
	}
	return total
}

// untilBelow is the tick at which the count will have fallen below limit if
// nothing more is added; s must have been advanced to now's tick.
func (s *slidingCount) untilBelow(limit int) int64 {
	total := s.count()
	for t := s.last - failBuckets + 1; t <= s.last; t++ {
		if total < limit {
			return t - 1 + failBuckets
		}
		total -= int(s.n[bucket(t)])
	}
	return s.last + failBuckets
}

// failTally is slidingCounts by key, at most max of them: past it every new
// key shares one counter, so a flood of distinct keys costs memory no more
// than that and is still counted.
type failTally struct {
	max    int
	counts map[string]*slidingCount
	pruned int64 // the tick of the last prune: a full map is swept at most once a tick
}

// overflowKey is the counter every new key shares while a tally is full.
const overflowKey = "\x00overflow"

// add counts one event of k at tick and returns its counter and the count
// before it.
func (t *failTally) add(k string, tick int64) (*slidingCount, int) {
	s := t.counts[k]
	if s == nil && len(t.counts) >= t.max {
		t.prune(tick)
		if len(t.counts) >= t.max {
			k = overflowKey
			s = t.counts[k]
		}
	}
	if s == nil {
		s = &slidingCount{last: tick}
		t.counts[k] = s
	}
	return s, s.add(tick)
}

// prune drops the counters whose every event has slid out of the window.
func (t *failTally) prune(tick int64) {
	if tick == t.pruned {
		return
	}
	t.pruned = tick
	for k, s := range t.counts {
		if tick-s.last >= failBuckets {
			delete(t.counts, k)
		}
	}
}

// bucket is where tick's events are kept (a clock before 1970 included).
func bucket(tick int64) int {
	return int((tick%failBuckets + failBuckets) % failBuckets)
}

// tickOf is the tick holding time now for buckets of width.
func tickOf(now time.Time, width time.Duration) int64 {
	return now.UnixNano() / int64(width)
}
