package overview

import (
	"strings"
	"testing"
	"time"
)

const scrape = `# TYPE kernelgate_queue_depth gauge
kernelgate_queue_depth 7
# TYPE kernelgate_ready gauge
kernelgate_ready 1
# TYPE kernelgate_evaluations_total counter
kernelgate_evaluations_total{status="correct"} 30
kernelgate_evaluations_total{status="reward_hack"} 2
kernelgate_evaluations_total{status="timeout"} 0
# TYPE kernelgate_worker_up gauge
kernelgate_worker_up{device="gpu1"} 1
kernelgate_worker_up{device="gpu0"} 0
# TYPE kernelgate_worker_slots gauge
kernelgate_worker_slots{device="gpu0"} 4
kernelgate_worker_slots{device="gpu1"} 4
# TYPE kernelgate_worker_in_flight gauge
kernelgate_worker_in_flight{device="gpu1"} 3
# TYPE kernelgate_evaluation_exec_seconds histogram
kernelgate_evaluation_exec_seconds_bucket{le="1"} 10
kernelgate_evaluation_exec_seconds_bucket{le="10"} 30
kernelgate_evaluation_exec_seconds_bucket{le="+Inf"} 32
kernelgate_evaluation_exec_seconds_sum 90
kernelgate_evaluation_exec_seconds_count 32
`

func TestFromMetrics(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, err := FromMetrics(strings.NewReader(scrape), now)
	if err != nil {
		t.Fatal(err)
	}
	if s.QueueDepth == nil || *s.QueueDepth != 7 || !s.Ready || s.Total() != 32 {
		t.Errorf("queue %v ready %v total %v", s.QueueDepth, s.Ready, s.Total())
	}
	if got := strings.Join(s.Statuses(), ","); got != "correct,reward_hack,timeout" {
		t.Errorf("statuses %s", got)
	}
	if len(s.Workers) != 2 || s.Workers[0].Device != "gpu0" || s.Workers[0].Up || s.Workers[1].InFlight != 3 || s.Workers[1].Slots != 4 {
		t.Errorf("workers %+v", s.Workers)
	}
	// A histogram's buckets give no quantile that was observed: the run
	// times come from the slowest tasks' runs (AddSlowest) or not at all.
	if s.Exec.Count != 0 || s.Exec.P50 != nil || s.QueueWait.P50 != nil {
		t.Errorf("exec %+v, queue wait %+v from histograms", s.Exec, s.QueueWait)
	}
	if err := s.AddSlowest([]byte(`{"runs":3,"since":null,"tasks":[],` +
		`"exec":{"count":3,"p50":0.5,"p99":5.63,"max":5.63},"queue_wait":{"count":3,"p50":0.001,"p99":0.002,"max":0.002}}`)); err != nil {
		t.Fatal(err)
	}
	if s.Exec.Count != 3 || *s.Exec.P99 != 5.63 || *s.Exec.Max != 5.63 || *s.QueueWait.P50 != 0.001 {
		t.Errorf("exec %+v, queue wait %+v after AddSlowest", s.Exec, s.QueueWait)
	}
	later, _ := FromMetrics(strings.NewReader(strings.Replace(scrape, `{status="correct"} 30`, `{status="correct"} 40`, 1)), now.Add(5*time.Second))
	if r := later.Rate(s); r != 2 {
		t.Errorf("rate %g, want 2/s", r)
	}
	if err := s.AddGPUs([]byte(`{"mode":"gpu","gpus":[{"index":0,"name":"NVIDIA H200","memory_total_bytes":150,"utilization_percent":87}]}`)); err != nil ||
		len(s.GPUs) != 1 || *s.GPUs[0].UtilizationPercent != 87 || s.GPUs[0].MemoryUsedBytes != nil {
		t.Errorf("gpus %+v: %v", s.GPUs, err)
	}
	if _, err := FromMetrics(strings.NewReader("\x1f\x8b gzip"), now); err == nil {
		t.Error("a compressed body parsed")
	}
	noQueue, _ := FromMetrics(strings.NewReader("# TYPE kernelgate_ready gauge\nkernelgate_ready 0\n"), now)
	if noQueue.QueueDepth != nil || len(noQueue.Missing) != 1 {
		t.Errorf("a scrape without the queue: %+v", noQueue)
	}
}
