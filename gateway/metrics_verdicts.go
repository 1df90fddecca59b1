package gateway

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
)

// verdictMetrics are what the dashboard needs beyond the status counts:
// the hack flags caught, the answers given without a run, and the slowest
// tasks (slowest.go, served by GET /v1/stats/slowest-tasks, never as labels).
//
// Cached answers are their own counter rather than a label on
// kernelgate_evaluations_total: a new label would split every status's
// series in two, and a query or rule that reads one series without sum()
// (kernelgate_evaluations_total{status="correct"}, or a ratio of two
// selectors that match label sets) would silently change meaning. The hit
// rate is kernelgate_evaluations_cached_total / kernelgate_evaluations_total.
type verdictMetrics struct {
	hackFlags *prometheus.CounterVec
	cached    *prometheus.CounterVec
	slowest   *slowest
}

// Values of kernelgate_evaluations_cached_total's label from.
const (
	fromCache  = "cache"  // the result cache had the verdict
	fromShared = "shared" // an identical evaluation in flight answered it
)

// otherFlag is the label of a hack flag eval.HackFlags does not name: the
// flags come from the sandboxed child, so they must not mint labels.
const otherFlag = "other"

func newVerdictMetrics() *verdictMetrics {
	v := &verdictMetrics{
		hackFlags: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelgate_evaluation_hack_flags_total",
			Help: "Verdicts carrying each hack flag (eval.HackFlags; any other flag counts as other). A verdict with two flags counts once under each.",
		}, []string{"flag"}),
		cached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelgate_evaluations_cached_total",
			Help: "Verdicts answered without a run of their own, by from: cache (the result cache) or shared (an identical evaluation in flight). Also counted in kernelgate_evaluations_total.",
		}, []string{"from"}),
		slowest: newSlowest(slowestRuns, time.Now),
	}
	for _, f := range append(slices.Clone(eval.HackFlags), otherFlag) {
		v.hackFlags.WithLabelValues(f) // every flag shows, at 0 until it happens
	}
	v.cached.WithLabelValues(fromCache)
	v.cached.WithLabelValues(fromShared)
	return v
}

// collectors are what newMetrics registers for these, the sink's backlog included.
func (v *verdictMetrics) collectors(s *Server) []prometheus.Collector {
	return []prometheus.Collector{v.hackFlags, v.cached, &sinkCollector{s: s}}
}

// observe counts one announced result (metrics.observe calls it for each).
func (v *verdictMetrics) observe(r dispatch.Result) {
	seen := map[string]bool{}
	for _, f := range r.Verdict.HackFlags {
		if !slices.Contains(eval.HackFlags, f) {
			f = otherFlag
		}
		if !seen[f] {
			seen[f] = true
			v.hackFlags.WithLabelValues(f).Inc()
		}
	}
	switch {
	case r.Cached:
		v.cached.WithLabelValues(fromCache).Inc()
	case r.Shared:
		v.cached.WithLabelValues(fromShared).Inc()
	case r.ExecMS > 0 && r.Verdict.TaskInfo == nil: // a run, and not a task check
		v.slowest.add(r.Verdict.TaskHash, r.Verdict.TaskName, r.ExecMS, r.QueueWaitMS)
	}
}

// sinkCollector reads how far the Parquet sink is behind at scrape time.
type sinkCollector struct{ s *Server }

var descSinkBacklog = prometheus.NewDesc("kernelgate_sink_backlog_events",
	"Events on the EVENTS stream the Parquet sink has not written yet (not delivered plus delivered and unacked); absent when the stream cannot be read.", nil, nil)

// sinkBacklogTimeout bounds the read: a scrape must not hang on a slow store.
const sinkBacklogTimeout = time.Second

func (sc *sinkCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descSinkBacklog }

// Collect reports nothing when the backlog cannot be read: an absent series
// is an honest "unknown", where a 0 would say the sink is caught up.
func (sc *sinkCollector) Collect(ch chan<- prometheus.Metric) {
	if sc.s.deps.Bus == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sinkBacklogTimeout)
	defer cancel()
	n, err := sc.s.deps.Bus.EventsBacklog(ctx, export.Durable)
	if err != nil {
		sc.s.log.Warn("metrics: sink backlog unavailable", "err", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descSinkBacklog, prometheus.GaugeValue, float64(n))
}
