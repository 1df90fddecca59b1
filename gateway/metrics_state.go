package gateway

import (
	"context"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/export/dataset"
)

// stateCollector reads the gauges that describe now at scrape time: the
// queue, readiness, the local workers and their GPUs. Without GPUs the
// kernelgate_gpu_* series are absent, not zero.
type stateCollector struct{ s *Server }

var (
	descQueueDepth = prometheus.NewDesc("kernelgate_queue_depth",
		"Jobs in the JOBS stream: queued plus delivered and not yet acked.", nil, nil)
	descReady = prometheus.NewDesc("kernelgate_ready",
		"1 when /readyz answers 200.", nil, nil)
	descWorkerUp = prometheus.NewDesc("kernelgate_worker_up",
		"1 when the zygote of a local worker (device gpu<N> or cpu) is up.", []string{"device"}, nil)
	descWorkerInFlight = prometheus.NewDesc("kernelgate_worker_in_flight",
		"Evaluations a local worker is running.", []string{"device"}, nil)
	descWorkerSlots = prometheus.NewDesc("kernelgate_worker_slots",
		"Evaluations a local worker runs at once (its concurrency).", []string{"device"}, nil)
	descWorkerBusy = prometheus.NewDesc("kernelgate_worker_busy_ratio",
		"in_flight / slots of a local worker: its busy share.", []string{"device"}, nil)
	descGPUClock = prometheus.NewDesc("kernelgate_gpu_sm_clock_mhz",
		"Current SM clock (NVML).", []string{"gpu"}, nil)
	descGPUUtil = prometheus.NewDesc("kernelgate_gpu_utilization_ratio",
		"Share of the last NVML sample period in which a kernel ran.", []string{"gpu"}, nil)
	descGPUMemUsed = prometheus.NewDesc("kernelgate_gpu_memory_used_bytes",
		"Device memory in use (NVML).", []string{"gpu"}, nil)
	descGPUMemTotal = prometheus.NewDesc("kernelgate_gpu_memory_total_bytes",
		"Device memory (NVML).", []string{"gpu"}, nil)
	descStoreWritable = prometheus.NewDesc("kernelgate_store_writable",
		"1 while the queue store takes writes; 0 while it is full (writes get 507, /readyz says why).", nil, nil)
	descStoreDamage = prometheus.NewDesc("kernelgate_store_damage",
		"Damage the embedded queue store reported since start (records it dropped from a bad block), by stream.", []string{"store"}, nil)
	descStoreSalvage = prometheus.NewDesc("kernelgate_store_salvage_records",
		"Records of damaged store blocks at start, by stream and outcome: readable, lost (unreadable), recovered (put back), skipped (the store held newer, or deleted or expired).", []string{"stream", "outcome"}, nil)
	descStoreSalvageLost = prometheus.NewDesc("kernelgate_store_salvage_lost_bytes",
		"Bytes of damaged store blocks at start that held no readable record, by stream.", []string{"stream"}, nil)
	descQuarantined = prometheus.NewDesc("kernelgate_parquet_quarantined_files",
		"Parquet files moved aside as unreadable (data/parquet/.quarantine).", nil, nil)
)

func (sc *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descQueueDepth, descReady, descWorkerUp, descWorkerInFlight,
		descWorkerSlots, descWorkerBusy, descGPUClock, descGPUUtil, descGPUMemUsed, descGPUMemTotal,
		descStoreWritable, descStoreDamage, descStoreSalvage, descStoreSalvageLost, descQuarantined} {
		ch <- d
	}
}

func (sc *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := sc.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if s.deps.Bus != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		depth, err := s.deps.Bus.QueueDepth(ctx)
		cancel()
		if err != nil {
			s.log.Warn("metrics: queue depth unavailable", "err", err)
		} else {
			gauge(descQueueDepth, float64(depth))
		}
	}
	gauge(descReady, boolValue(s.ready() == nil))
	sc.storeGauges(gauge)
	if s.deps.GPUs == nil {
		return
	}
	for _, st := range s.deps.GPUs.Stats() {
		gauge(descWorkerUp, boolValue(st.Up), st.Label)
		gauge(descWorkerInFlight, float64(st.InFlight), st.Label)
		gauge(descWorkerSlots, float64(st.Concurrency), st.Label)
		if st.Concurrency > 0 {
			gauge(descWorkerBusy, float64(st.InFlight)/float64(st.Concurrency), st.Label)
		}
	}
	for _, g := range sampleGPUs(s.deps.GPUs).GPUs {
		idx := strconv.Itoa(g.Index)
		gauge(descGPUMemTotal, float64(g.MemoryTotalBytes), idx)
		if g.SMClockMHz != nil {
			gauge(descGPUClock, float64(*g.SMClockMHz), idx)
		}
		if g.UtilizationPercent != nil {
			gauge(descGPUUtil, float64(*g.UtilizationPercent)/100, idx)
		}
		if g.MemoryUsedBytes != nil {
			gauge(descGPUMemUsed, float64(*g.MemoryUsedBytes), idx)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// storeGauges reports the store's health: writable, damage, quarantined files.
func (sc *stateCollector) storeGauges(gauge func(*prometheus.Desc, float64, ...string)) {
	s := sc.s
	if s.deps.Bus != nil {
		gauge(descStoreWritable, boolValue(s.deps.Bus.Writable() == nil))
		damage := map[string]int{}
		for _, d := range s.deps.Bus.Damage() {
			damage[d.Store]++
		}
		for store, n := range damage {
			gauge(descStoreDamage, float64(n), store)
		}
		for _, r := range s.deps.Bus.Salvage() {
			gauge(descStoreSalvage, float64(r.Readable), r.Stream, "readable")
			gauge(descStoreSalvage, float64(r.Lost), r.Stream, "lost")
			gauge(descStoreSalvage, float64(r.Recovered), r.Stream, "recovered")
			gauge(descStoreSalvage, float64(r.Skipped), r.Stream, "skipped")
			gauge(descStoreSalvageLost, float64(r.LostBytes), r.Stream)
		}
	}
	if dir := s.deps.Exports.DataDir; dir != "" {
		gauge(descQuarantined, float64(export.QuarantinedFiles(filepath.Join(dir, dataset.LogDir))))
	}
}
