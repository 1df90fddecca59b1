package overview

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is the gateway at one moment. Counters and histograms are
// cumulative since the gateway started; a caller that keeps the previous
// snapshot gets rates with Rate.
type Snapshot struct {
	Time  time.Time `json:"time"`
	Ready bool      `json:"ready"`
	// Health is what /readyz said: "ready", "degraded: why" (serving while the
	// store's batches are checked after a start) or "not ready: why"; "" unread.
	Health string `json:"health,omitempty"`
	// QueueDepth is nil when the gateway could not read its queue.
	QueueDepth *float64 `json:"queue_depth"`
	InFlight   float64  `json:"http_in_flight"`
	// Verdicts counts the verdicts announced, by status (every status the
	// harness knows is present, at 0 until it happens).
	Verdicts map[string]float64 `json:"verdicts"`
	// Exec and QueueWait are a job's run and wait in the queue (seconds).
	// HackFlags counts the verdicts carrying each hack flag (every flag the
	// harness knows, and other); Cached those answered without a run of
	// their own, by from (cache, shared); both also in Verdicts.
	HackFlags map[string]float64 `json:"hack_flags"`
	Cached    map[string]float64 `json:"cached"`
	// SinkBacklog: events the Parquet sink has not written (nil: unknown).
	SinkBacklog *float64 `json:"sink_backlog"`
	// Slowest: the slowest tasks lately (nil: not read).
	Slowest *Slowest `json:"slowest"`
	// Exec and QueueWait are measured over the runs the slowest tasks
	// were ranked from (zero when those could not be read).
	Exec      Measured `json:"exec"`
	QueueWait Measured `json:"queue_wait"`
	Workers   []Worker `json:"workers"`
	GPUs      []GPU    `json:"gpus"`
	GPUMode   string   `json:"gpu_mode,omitempty"` // /v1/gpus's mode: gpu, cpu_interpreter, none
	GPUReason string   `json:"gpu_reason,omitempty"`
	Missing   []string `json:"missing,omitempty"` // what could not be read, and why
}

// Worker is one local worker (label device: gpu<N> or cpu).
type Worker struct {
	Device   string  `json:"device"`
	Up       bool    `json:"up"`
	InFlight float64 `json:"in_flight"`
	Slots    float64 `json:"slots"`
}

// GPU is one device as /v1/gpus reports it; NVML fields are nil where the
// driver did not say.
type GPU struct {
	Index              int    `json:"index"`
	Name               string `json:"name"`
	MemoryTotalBytes   int64  `json:"memory_total_bytes"`
	MemoryUsedBytes    *int64 `json:"memory_used_bytes"`
	UtilizationPercent *int   `json:"utilization_percent"`
	SMClockMHz         *int   `json:"sm_clock_mhz"`
	InFlight           int    `json:"in_flight"`
	Concurrency        int    `json:"concurrency"`
}

// Total is the number of verdicts of every status.
func (s Snapshot) Total() float64 {
	var n float64
	for _, v := range s.Verdicts {
		n += v
	}
	return n
}

// Statuses are the verdict statuses in s, most frequent first (ties by name).
func (s Snapshot) Statuses() []string {
	out := make([]string, 0, len(s.Verdicts))
	for k := range s.Verdicts {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b string) int {
		if s.Verdicts[a] != s.Verdicts[b] {
			if s.Verdicts[a] > s.Verdicts[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

// Rate is verdicts per second between prev and s (0 when prev is not older).
func (s Snapshot) Rate(prev Snapshot) float64 {
	dt := s.Time.Sub(prev.Time).Seconds()
	if dt <= 0 || prev.Time.IsZero() {
		return 0
	}
	return max(0, s.Total()-prev.Total()) / dt
}

// FromMetrics reads the Prometheus text of GET /metrics.
func FromMetrics(r io.Reader, now time.Time) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("overview: parsing /metrics: %w", err)
	}
	s := Snapshot{Time: now, Verdicts: map[string]float64{}, HackFlags: map[string]float64{}, Cached: map[string]float64{}}
	if f := fams["kernelgate_queue_depth"]; f != nil && len(f.Metric) > 0 {
		v := gaugeValue(f.Metric[0])
		s.QueueDepth = &v
	} else {
		s.Missing = append(s.Missing, "queue depth (the gateway could not read its queue)")
	}
	if f := fams["kernelgate_ready"]; f != nil && len(f.Metric) > 0 {
		s.Ready = gaugeValue(f.Metric[0]) == 1
	}
	if f := fams["kernelgate_http_requests_in_flight"]; f != nil && len(f.Metric) > 0 {
		s.InFlight = gaugeValue(f.Metric[0])
	}
	for _, m := range metricsOf(fams, "kernelgate_evaluations_total") {
		s.Verdicts[label(m, "status")] += m.GetCounter().GetValue()
	}
	s.verdictDetail(fams) // verdicts.go
	s.Workers = workersOf(fams)
	return s, nil
}

// AddGPUs fills the GPUs from GET /v1/gpus's body.
func (s *Snapshot) AddGPUs(body []byte) error {
	var g struct {
		Mode   string `json:"mode"`
		Reason string `json:"reason"`
		GPUs   []GPU  `json:"gpus"`
	}
	if err := json.Unmarshal(body, &g); err != nil {
		return fmt.Errorf("overview: decoding /v1/gpus: %w", err)
	}
	s.GPUs, s.GPUMode, s.GPUReason = g.GPUs, g.Mode, g.Reason
	return nil
}

func metricsOf(fams map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f := fams[name]; f != nil {
		return f.Metric
	}
	return nil
}

func gaugeValue(m *dto.Metric) float64 {
	if m.Gauge != nil {
		return m.Gauge.GetValue()
	}
	return m.GetUntyped().GetValue()
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func workersOf(fams map[string]*dto.MetricFamily) []Worker {
	byDev := map[string]*Worker{}
	get := func(m *dto.Metric) *Worker {
		d := label(m, "device")
		if byDev[d] == nil {
			byDev[d] = &Worker{Device: d}
		}
		return byDev[d]
	}
	for _, m := range metricsOf(fams, "kernelgate_worker_up") {
		get(m).Up = gaugeValue(m) == 1
	}
	for _, m := range metricsOf(fams, "kernelgate_worker_in_flight") {
		get(m).InFlight = gaugeValue(m)
	}
	for _, m := range metricsOf(fams, "kernelgate_worker_slots") {
		get(m).Slots = gaugeValue(m)
	}
	out := make([]Worker, 0, len(byDev))
	for _, w := range byDev {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b Worker) int { return strings.Compare(a.Device, b.Device) })
	return out
}
