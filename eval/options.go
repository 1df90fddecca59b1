package eval

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Options tune one evaluation. Start from DefaultOptions: the zero value is
// not valid (Seeds 0). Field meanings and defaults are docs/protocol.md's table.
type Options struct {
	Seeds          int      `json:"seeds"`
	Seed           int      `json:"seed"`
	Atol           *float64 `json:"atol"` // nil: by the reference output dtype
	Rtol           *float64 `json:"rtol"`
	Timing         bool     `json:"timing"`
	TimingBudgetMS int      `json:"timing_budget_ms"`
	MinIters       int      `json:"min_iters"`
	MaxIters       int      `json:"max_iters"`
	TimeoutS       int      `json:"timeout_s"`
	// CompileTimeoutS bounds the candidate's load and first call (import,
	// Triton JIT, autotune): past it, compile_timeout. 0: the mode's default
	// (90 s on a GPU, none on a CPU); omitted then, so default options encode
	// (and are cached) as before.
	CompileTimeoutS  int  `json:"compile_timeout_s,omitempty"`
	MemoryLimitMB    int  `json:"memory_limit_mb"`
	OutputLimitBytes int  `json:"output_limit_bytes"`
	CopyWeights      bool `json:"copy_weights"`
	MaxCodeBytes     int  `json:"max_code_bytes"`
	// GPUMemoryFraction caps the child's share of GPU memory, so a candidate that
	// grabs it all cannot make its neighbours on the same GPU fail with OOM.
	GPUMemoryFraction float64 `json:"gpu_memory_fraction"`
	// RequireTriton (nil: true) flags a submission that launches none of its
	// own Triton kernels as no_triton; false lets pure-PyTorch submissions be
	// judged and timed. Canonical makes true nil, so it travels (and enters
	// the result cache key) only when false.
	RequireTriton *bool `json:"require_triton,omitempty"`
	// CPUTiming runs the timing protocol in CPU mode too, on host clocks: the
	// figures are not comparable (no speedup), but the judge's checks of the
	// candidate's timer and timed outputs run, as they do on a GPU.
	CPUTiming bool `json:"cpu_timing,omitempty"`
	// Requires routes the job to workers of one environment (dispatch.JobSubject):
	// rewards a trainer compares should come from one GPU model and
	// toolchain. Go-side only: the harness never reads it.
	Requires *Requires `json:"requires,omitempty"`
}

// Requires names an environment, each field exactly as a verdict's env (or
// GET /v1/gpus) gives it; "" asks nothing of that part. The GPU model is
// matched ignoring case, spaces and punctuation ("NVIDIA H200" =
// "nvidia-h200"), versions as releases ("2.11.0", no "+cu130").
type Requires struct {
	GPU    string `json:"gpu,omitempty"`
	Torch  string `json:"torch,omitempty"`
	Triton string `json:"triton,omitempty"`
}

// maxRequireLen bounds a requirement's each value (a GPU name is ~30).
const maxRequireLen = 64

func isAlnum(c rune) bool { return c < 128 && ('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9') }

// Defaults that the host can lower (HostMemoryMB, the gateway's caps).
const (
	// DefaultMemoryLimitMB is memory_limit_mb when nothing lowers it.
	DefaultMemoryLimitMB = 32768
	// MinHostMemoryMB floors HostMemoryMB: a child importing torch and
	// building a small task's reference needs about 1 GiB whatever the host.
	MinHostMemoryMB = 1024
)

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		Seeds:             5,
		Timing:            true,
		TimingBudgetMS:    50,
		MinIters:          5,
		MaxIters:          500,
		TimeoutS:          120,
		MemoryLimitMB:     DefaultMemoryLimitMB,
		OutputLimitBytes:  1 << 20,
		MaxCodeBytes:      256 << 10,
		GPUMemoryFraction: 0.25,
	}
}

// Validate reports every option out of range, naming each field as it
// appears on the wire and in the CLI.
func (o Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(o.Seeds >= 1 && o.Seeds <= 100, "seeds must be in 1..100, got %d", o.Seeds)
	check(o.Seed >= 0, "seed must be >= 0, got %d", o.Seed)
	check(tolOK(o.Atol), "atol must be a finite number >= 0, got %v", deref(o.Atol))
	check(tolOK(o.Rtol), "rtol must be a finite number >= 0, got %v", deref(o.Rtol))
	check(o.TimingBudgetMS >= 1 && o.TimingBudgetMS <= 60000, "timing_budget_ms must be in 1..60000, got %d", o.TimingBudgetMS)
	check(o.MinIters >= 1, "min_iters must be >= 1, got %d", o.MinIters)
	check(o.MaxIters >= o.MinIters && o.MaxIters <= 100000, "max_iters must be in min_iters..100000, got %d", o.MaxIters)
	check(o.TimeoutS >= 1 && o.TimeoutS <= 3600, "timeout_s must be in 1..3600 s, got %d", o.TimeoutS)
	check(o.CompileTimeoutS >= 0 && o.CompileTimeoutS <= 3600, "compile_timeout_s must be in 0..3600 s (0: the default), got %d", o.CompileTimeoutS)
	check(o.MemoryLimitMB >= 64, "memory_limit_mb must be >= 64, got %d", o.MemoryLimitMB)
	check(o.OutputLimitBytes >= 0 && o.OutputLimitBytes <= 256<<20, "output_limit_bytes must be in 0..256 MiB, got %d", o.OutputLimitBytes)
	check(o.MaxCodeBytes >= 1 && o.MaxCodeBytes <= 16<<20, "max_code_bytes must be in 1..16 MiB, got %d", o.MaxCodeBytes)
	check(o.GPUMemoryFraction > 0 && o.GPUMemoryFraction <= 1, "gpu_memory_fraction must be in (0, 1], got %v", o.GPUMemoryFraction)
	if r := o.Requires; r != nil {
		for _, f := range [...]struct{ name, v string }{{"gpu", r.GPU}, {"torch", r.Torch}, {"triton", r.Triton}} {
			check(len(f.v) <= maxRequireLen && utf8.ValidString(f.v), "requires.%s must be at most %d bytes of UTF-8, got %d bytes", f.name, maxRequireLen, len(f.v))
			check(f.v == "" || strings.IndexFunc(f.v, isAlnum) >= 0, "requires.%s must name something (a letter or digit), got %q", f.name, f.v)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval.Options: %w", err)
	}
	return nil
}

// RequiresTriton is require_triton with its default applied.
func (o Options) RequiresTriton() bool { return o.RequireTriton == nil || *o.RequireTriton }

// Canonical returns o with every value that has two spellings in its one
// spelling (require_triton true: omitted), so equal options encode equally
// (the worker's result cache key is over the encoded options).
func (o Options) Canonical() Options {
	if o.RequiresTriton() {
		o.RequireTriton = nil
	}
	if r := o.Requires; r != nil && *r == (Requires{}) {
		o.Requires = nil // asks nothing
	}
	return o
}

// HostHeadroomPercent is the share of a host's memory that evaluations may
// hold together; the rest is the gateway's, NATS's and the sink's.
const HostHeadroomPercent = 75

// HostHeadroomMB is what evaluations may hold together on a host with
// hostBytes of memory (HostHeadroomPercent of it), in MiB.
func HostHeadroomMB(hostBytes uint64) int {
	return int((hostBytes >> 20) * HostHeadroomPercent / 100)
}

// HostMemoryMB is the host RSS each of slots evaluations running at once
// may use on a host with hostBytes of memory: HostHeadroomMB / slots, at
// least MinHostMemoryMB (where that floor is more than the share, the
// supervisor's admission runs fewer at once). It is serve's --max-memory-mb
// default; with DefaultMemoryLimitMB as a ceiling, eval's and bench's
// memory_limit_mb.
func HostMemoryMB(hostBytes uint64, slots int) int {
	share := uint64(HostHeadroomMB(hostBytes))
	if slots > 1 {
		share /= uint64(slots)
	}
	return int(max(share, MinHostMemoryMB))
}

func tolOK(p *float64) bool {
	return p == nil || (*p >= 0 && !math.IsInf(*p, 0) && !math.IsNaN(*p))
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
