package gateway

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// GPUSource is what GET /v1/gpus and the worker and GPU metrics read:
// the local harness. *harness.Supervisor is one.
type GPUSource interface {
	Mode() string                 // eval.TimingGPU or eval.TimingCPUInterpreter
	GPUs() gpu.Info               // what NVML discovery found
	Stats() []harness.ZygoteStats // one per zygote: "gpu<N>" or "cpu"
}

// modeNone is the mode of a gateway without local workers (Deps.GPUs nil).
const modeNone = "none"

// gpuList is the 200 body of GET /v1/gpus (schema GPUList).
type gpuList struct {
	Mode        string      `json:"mode"`
	Driver      string      `json:"driver,omitempty"`
	Reason      string      `json:"reason,omitempty"`
	InFlight    int         `json:"in_flight"`
	Concurrency int         `json:"concurrency"`
	GPUs        []gpuStatus `json:"gpus"`
}

// gpuStatus is one GPU (schema GPU). The NVML readings are null when the
// driver does not answer them.
type gpuStatus struct {
	Index              int     `json:"index"`
	Name               string  `json:"name"`
	UUID               string  `json:"uuid"`
	MemoryTotalBytes   uint64  `json:"memory_total_bytes"`
	MemoryUsedBytes    *uint64 `json:"memory_used_bytes"`
	SMClockMHz         *int    `json:"sm_clock_mhz"`
	UtilizationPercent *int    `json:"utilization_percent"`
	WorkerUp           bool    `json:"worker_up"`
	InFlight           int     `json:"in_flight"`
	Concurrency        int     `json:"concurrency"`
}

func (s *Server) gpus(c *gin.Context) {
	c.JSON(http.StatusOK, sampleGPUs(s.deps.GPUs))
}

// sampleGPUs reads src now: every visible GPU through NVML and the zygotes'
// load. A GPU no zygote serves (--device N picked another) has concurrency 0.
func sampleGPUs(src GPUSource) gpuList {
	if src == nil {
		return gpuList{Mode: modeNone, Reason: "no local workers", GPUs: []gpuStatus{}}
	}
	info := src.GPUs()
	out := gpuList{Mode: src.Mode(), Driver: info.Driver, Reason: info.Reason, GPUs: []gpuStatus{}}
	if out.Mode == "" { // workers on other hosts, none announced or of both modes
		out.Mode = modeNone
	}
	stats := map[string]harness.ZygoteStats{}
	for _, st := range src.Stats() {
		stats[st.Label] = st
		out.InFlight += st.InFlight
		out.Concurrency += st.Concurrency
	}
	for _, d := range info.Devices {
		g := gpuStatus{Index: d.Index, Name: d.Name, UUID: d.UUID, MemoryTotalBytes: d.MemoryTotal,
			SMClockMHz: read(d.SMClock), UtilizationPercent: read(d.Utilization), MemoryUsedBytes: read(d.MemoryUsed)}
		if st, ok := stats["gpu"+strconv.Itoa(d.Index)]; ok {
			g.WorkerUp, g.InFlight, g.Concurrency = st.Up, st.InFlight, st.Concurrency
		}
		out.GPUs = append(out.GPUs, g)
	}
	if out.Mode == eval.TimingCPUInterpreter && out.Reason == "" {
		out.Reason = "CPU mode (Triton interpreter)"
	}
	return out
}

// read calls an NVML reader; nil when there is none or it fails.
func read[T any](f func() (T, error)) *T {
	if f == nil {
		return nil
	}
	v, err := f()
	if err != nil {
		return nil
	}
	return &v
}
