package gateway

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// fakeGPUs is a hand-written harness: fixed devices and zygote stats.
type fakeGPUs struct {
	mode  string
	info  gpu.Info
	stats []harness.ZygoteStats
}

func (f fakeGPUs) Mode() string                 { return f.mode }
func (f fakeGPUs) GPUs() gpu.Info               { return f.info }
func (f fakeGPUs) Stats() []harness.ZygoteStats { return f.stats }

func cpuHarness() fakeGPUs {
	return fakeGPUs{mode: eval.TimingCPUInterpreter, info: gpu.Info{Devices: []gpu.Device{}},
		stats: []harness.ZygoteStats{{Label: "cpu", Up: true, InFlight: 1, Concurrency: 2}}}
}

func twoH200s() fakeGPUs {
	ok := func(v int) func() (int, error) { return func() (int, error) { return v, nil } }
	return fakeGPUs{mode: eval.TimingGPU, info: gpu.Info{Driver: "580.159.04", Devices: []gpu.Device{
		{Index: 0, Name: "NVIDIA H200", UUID: "GPU-aaaa", MemoryTotal: 150 << 30, SMClock: ok(1980), Utilization: ok(87),
			MemoryUsed: func() (uint64, error) { return 20 << 30, nil }},
		{Index: 1, Name: "NVIDIA H200", UUID: "GPU-bbbb", MemoryTotal: 150 << 30, SMClock: ok(345),
			Utilization: func() (int, error) { return 0, errors.New("GPU is lost") }},
	}}, stats: []harness.ZygoteStats{{Label: "gpu0", Up: true, InFlight: 3, Concurrency: 4}}}
}

func TestGPUs(t *testing.T) {
	tests := []struct {
		name string
		src  GPUSource
		want string
	}{
		{"cpu mode", cpuHarness(), `{"mode":"cpu_interpreter","reason":"CPU mode (Triton interpreter)","in_flight":1,"concurrency":2,"gpus":[]}`},
		{"no local workers", nil, `{"mode":"none","reason":"no local workers","in_flight":0,"concurrency":0,"gpus":[]}`},
		{"workers on other hosts of both modes", fakeGPUs{info: gpu.Info{Reason: "workers on other hosts: 2 announced"},
			stats: []harness.ZygoteStats{{Label: "a-1", Up: true, Concurrency: 16}, {Label: "b-1", Up: true, Concurrency: 2}}},
			`{"mode":"none","reason":"workers on other hosts: 2 announced","in_flight":0,"concurrency":18,"gpus":[]}`},
		{"two GPUs, one served", twoH200s(), `{"mode":"gpu","driver":"580.159.04","in_flight":3,"concurrency":4,"gpus":[` +
			`{"index":0,"name":"NVIDIA H200","uuid":"GPU-aaaa","memory_total_bytes":161061273600,"memory_used_bytes":21474836480,"sm_clock_mhz":1980,"utilization_percent":87,"worker_up":true,"in_flight":3,"concurrency":4},` +
			`{"index":1,"name":"NVIDIA H200","uuid":"GPU-bbbb","memory_total_bytes":161061273600,"memory_used_bytes":null,"sm_clock_mhz":345,"utilization_percent":null,"worker_up":false,"in_flight":0,"concurrency":0}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), GPUs: tt.src, Log: kgtest.Logger(t)})
			rec := request(t, srv.Handler(), "GET", "/v1/gpus", "", nil)
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			checkSpec(t, "GET", "/v1/gpus", rec)
			if got := strings.TrimSpace(rec.Body.String()); got != tt.want {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// /metrics shows the workers' busy share and, with GPUs, the NVML series;
// in CPU mode the GPU series are absent.
func TestMetricsGPUSeries(t *testing.T) {
	for _, tt := range []struct {
		name   string
		src    GPUSource
		has    []string
		hasNot []string
	}{
		{"gpu", twoH200s(), []string{
			`kernelgate_worker_busy_ratio{device="gpu0"} 0.75`, `kernelgate_worker_slots{device="gpu0"} 4`,
			`kernelgate_gpu_sm_clock_mhz{gpu="0"} 1980`, `kernelgate_gpu_sm_clock_mhz{gpu="1"} 345`,
			`kernelgate_gpu_utilization_ratio{gpu="0"} 0.87`, `kernelgate_gpu_memory_used_bytes{gpu="0"} 2.147483648e+10`,
			`kernelgate_gpu_memory_total_bytes{gpu="1"} 1.610612736e+11`, `kernelgate_queue_depth 0`, `kernelgate_ready 0`,
		}, []string{`kernelgate_gpu_utilization_ratio{gpu="1"}`}},
		{"cpu", cpuHarness(), []string{
			`kernelgate_worker_busy_ratio{device="cpu"} 0.5`, `kernelgate_worker_in_flight{device="cpu"} 1`, `kernelgate_worker_up{device="cpu"} 1`,
			`kernelgate_evaluations_total{status="correct"} 0`, "go_goroutines", "process_cpu_seconds_total",
		}, []string{"kernelgate_gpu_"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), GPUs: tt.src, Log: kgtest.Logger(t)})
			rec := request(t, srv.Handler(), "GET", "/metrics", "", nil)
			if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
				t.Fatalf("%d %s", rec.Code, rec.Header())
			}
			checkSpec(t, "GET", "/metrics", rec)
			body := rec.Body.String()
			for _, s := range tt.has {
				if !strings.Contains(body, "\n"+s) {
					t.Errorf("no %s", s)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(body, "\n"+s) {
					t.Errorf("unexpected %s", s)
				}
			}
		})
	}
}

// Results announced on the bus are counted once by the observer, with
// bounded labels whatever the verdict holds.
func TestMetricsObserve(t *testing.T) {
	srv := New(Config{}, Deps{Log: kgtest.Logger(t)})
	stages := map[string]float64{"fork": 3, "correctness": 1500, "Bad Label": 1, "neg": -1}
	for i := range 40 {
		stages["s"+strings.Repeat("x", i%35)] = 1
	}
	stagesJSON, err := json.Marshal(stages)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{
		`{"index":0,"id":"b-0","reward":1,"verdict":{"status":"correct","stage_ms":` + string(stagesJSON) + `},"queue_wait_ms":20,"exec_ms":1600}`,
		`{"index":1,"id":"b-1","reward":0,"verdict":{"status":"made_up"}}`,
	} {
		var res dispatch.Result
		if err := json.Unmarshal([]byte(r), &res); err != nil {
			t.Fatal(err)
		}
		srv.metrics.observe(res)
	}
	rec := request(t, srv.Handler(), "GET", "/metrics", "", nil)
	body := rec.Body.String()
	for _, s := range []string{
		`kernelgate_evaluations_total{status="correct"} 1`,
		`kernelgate_evaluations_total{status="unknown"} 1`,
		`kernelgate_evaluation_stage_seconds_count{stage="correctness"} 1`,
		`kernelgate_evaluation_stage_seconds_sum{stage="correctness"} 1.5`,
		`kernelgate_evaluation_stage_seconds_count{stage="other"}`,
		`kernelgate_evaluation_exec_seconds_count 1`,
		`kernelgate_evaluation_queue_wait_seconds_sum 0.02`,
	} {
		if !strings.Contains(body, "\n"+s) {
			t.Errorf("no %s", s)
		}
	}
	if n := strings.Count(body, "kernelgate_evaluation_stage_seconds_count{"); n > maxStages+1 {
		t.Errorf("%d stage labels, want at most %d", n, maxStages+1)
	}
	if strings.Contains(body, `stage="neg"`) {
		t.Error("a negative duration was observed")
	}
}
