package gateway

import (
	"context"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// latencyBuckets (seconds) reach 10 minutes: a reward request may wait for
// its batch that long, and a GPU evaluation's stages run from milliseconds
// (fork) to minutes (a slow compile).
var latencyBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// queueWaitBuckets are latencyBuckets finer below 50 ms: a free worker
// starts a job within milliseconds (bus wake-ups), and its p50 and p99
// should tell 1 ms from 5 ms.
var queueWaitBuckets = []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// metrics is the gateway's Prometheus registry: its own, not the global
// default, so that embedding the gateway (tests, other binaries) registers
// nothing twice. The names are listed in docs/operations.md.
type metrics struct {
	reg          *prometheus.Registry
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.Gauge
	evaluations  *prometheus.CounterVec
	stages       *prometheus.HistogramVec
	queueWait    prometheus.Histogram
	exec         prometheus.Histogram
	verdicts     *verdictMetrics // hack flags, cached answers, slowest tasks (metrics_verdicts.go)

	mu         sync.Mutex
	stageNames map[string]bool // stage labels seen, bounded by maxStages
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelgate_http_requests_total", Help: "HTTP requests answered, by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelgate_http_request_duration_seconds", Help: "HTTP request latency, by method and route pattern.", Buckets: latencyBuckets,
		}, []string{"method", "route"}),
		httpInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kernelgate_http_requests_in_flight", Help: "HTTP requests being served.",
		}),
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kernelgate_evaluations_total", Help: "Verdicts announced on the bus, by status (each counted by one gateway).",
		}, []string{"status"}),
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kernelgate_evaluation_stage_seconds", Help: "Time per evaluation stage (the verdict's stage_ms).", Buckets: latencyBuckets,
		}, []string{"stage"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kernelgate_evaluation_queue_wait_seconds", Help: "Time a job waited before its evaluation started: in the queue, and for a group's first job also a worker's wait for a second free slot (worker/gang.go).", Buckets: queueWaitBuckets,
		}),
		exec: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kernelgate_evaluation_exec_seconds", Help: "Time a worker spent on a job.", Buckets: latencyBuckets,
		}),
		stageNames: map[string]bool{},
		verdicts:   newVerdictMetrics(),
	}
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.httpInFlight, m.evaluations, m.stages, m.queueWait, m.exec,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{s: s})
	m.reg.MustRegister(m.verdicts.collectors(s)...)
	for _, st := range eval.Statuses {
		m.evaluations.WithLabelValues(string(st)) // every status shows, at 0 until it happens
	}
	return m
}

// handler serves the registry in the Prometheus text format. A collector
// that fails leaves its series out rather than failing the scrape.
func (m *metrics) handler() gin.HandlerFunc {
	return gin.WrapH(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
}

var knownMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// instrument counts and times every request. It runs outside the panic
// recovery, so a panic is counted as the 500 it becomes. Labels are bounded:
// the route is gin's pattern ("unmatched" for a 404) and odd methods are "other".
func (m *metrics) instrument(c *gin.Context) {
	start := time.Now()
	m.httpInFlight.Inc()
	defer m.httpInFlight.Dec()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	method := c.Request.Method
	if !slices.Contains(knownMethods, method) {
		method = "other"
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(c.Writer.Status())).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
}

// maxStages bounds the stage label's values: the verdict is written by the
// sandboxed child, which candidate code shares.
const maxStages = 32

var stageName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

func (m *metrics) stageLabel(name string) string {
	if !stageName.MatchString(name) {
		return "other"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.stageNames[name] {
		if len(m.stageNames) >= maxStages {
			return "other"
		}
		m.stageNames[name] = true
	}
	return name
}

// observe records one announced result.
func (m *metrics) observe(r dispatch.Result) {
	status := string(r.Verdict.Status)
	if !slices.Contains(eval.Statuses, r.Verdict.Status) {
		status = "unknown"
	}
	m.evaluations.WithLabelValues(status).Inc()
	m.verdicts.observe(r)
	if r.Cached || r.Shared {
		return // its stages are those of a run counted once already
	}
	// In name order: which names get their own label before the bound fills
	// must not depend on Go's map order.
	for _, name := range slices.Sorted(maps.Keys(r.Verdict.StageMS)) {
		ms := r.Verdict.StageMS[name]
		if ms >= 0 && !math.IsInf(ms, 0) && !math.IsNaN(ms) {
			m.stages.WithLabelValues(m.stageLabel(name)).Observe(ms / 1000)
		}
	}
	if r.ExecMS > 0 { // 0: a verdict the gateway made itself, with no queue or run
		m.queueWait.Observe(math.Max(r.QueueWaitMS, 0) / 1000)
		m.exec.Observe(r.ExecMS / 1000)
	}
}

// observeResults counts every result announced on the bus (workers' and the
// gateway's own; each by one gateway, so sums over them are right) until
// stop is called; stop waits for the goroutine.
func (s *Server) observeResults(ctx context.Context) (stop func(), err error) {
	if s.deps.Bus == nil {
		return func() {}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	done, err := s.evals.Observe(ctx, func(r dispatch.Result) {
		s.metrics.observe(r)
		s.historyAdd(r)
	})
	if err != nil {
		cancel()
		return nil, err
	}
	return func() { cancel(); <-done }, nil
}
