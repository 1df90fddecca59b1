package eval

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	neg, inf := -1.0, math.Inf(1)
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"seeds 0", func(o *Options) { o.Seeds = 0 }, "seeds must be in 1..100"},
		{"seeds 101", func(o *Options) { o.Seeds = 101 }, "seeds must be in 1..100"},
		{"timeout 0", func(o *Options) { o.TimeoutS = 0 }, "timeout_s must be in 1..3600"},
		{"timeout 3601", func(o *Options) { o.TimeoutS = 3601 }, "timeout_s"},
		{"negative atol", func(o *Options) { o.Atol = &neg }, "atol must be"},
		{"infinite rtol", func(o *Options) { o.Rtol = &inf }, "rtol must be"},
		{"iters inverted", func(o *Options) { o.MinIters, o.MaxIters = 50, 10 }, "max_iters"},
		{"huge output", func(o *Options) { o.OutputLimitBytes = 1 << 30 }, "output_limit_bytes"},
		{"zero code", func(o *Options) { o.MaxCodeBytes = 0 }, "max_code_bytes"},
		{"no GPU memory", func(o *Options) { o.GPUMemoryFraction = 0 }, "gpu_memory_fraction"},
		{"more than the GPU", func(o *Options) { o.GPUMemoryFraction = 1.5 }, "gpu_memory_fraction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.edit(&o)
			err := o.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestHostMemoryMB(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name      string
		hostBytes uint64
		slots     int
		want      int
	}{
		{"24 GiB, 2 CPU slots", 24 * gib, 2, 9216},
		{"this dev host's MemTotal, 2 slots", 24683656 << 10, 2, 9039},
		{"GPU host: 128 GiB, 16 slots", 128 * gib, 16, 6144},
		{"one slot gets the headroom", 24 * gib, 1, 18432},
		{"zero slots count as one", 24 * gib, 0, 18432},
		{"floored: 8 GiB, 16 slots", 8 * gib, 16, MinHostMemoryMB},
		{"floored: nothing known", 0, 4, MinHostMemoryMB},
		{"rounds down", 3*gib + 1, 2, 1152},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HostMemoryMB(tt.hostBytes, tt.slots); got != tt.want {
				t.Errorf("HostMemoryMB(%d, %d) = %d, want %d", tt.hostBytes, tt.slots, got, tt.want)
			}
		})
	}
}

// Every slot at its default limit leaves the gateway, NATS and the sink a
// quarter of the host: on this 2-core 24 GiB host and on a 16-core 128 GiB one.
func TestHostMemoryLeavesHeadroom(t *testing.T) {
	const gib = 1 << 30
	for _, h := range []struct {
		bytes uint64
		slots int
	}{{24 * gib, 2}, {24683656 << 10, 2}, {128 * gib, 16}, {128 * gib, 4}, {512 * gib, 8}} {
		sum := HostMemoryMB(h.bytes, h.slots) * h.slots
		if limit := int(h.bytes>>20) * 3 / 4; sum > limit {
			t.Errorf("%d MiB, %d slots: the slots' limits sum to %d MiB, over 75%% (%d MiB)", h.bytes>>20, h.slots, sum, limit)
		}
		if HostHeadroomMB(h.bytes) > int(h.bytes>>20)*3/4 {
			t.Errorf("%d MiB: headroom %d MiB over 75%%", h.bytes>>20, HostHeadroomMB(h.bytes))
		}
	}
}

func TestRequireTriton(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		set      *bool
		requires bool
		wire     string // the field in the encoded Canonical options; "" = absent
	}{
		{"unset: required, not sent", nil, true, ""},
		{"true: required, not sent (one spelling)", &yes, true, ""},
		{"false: allowed, sent", &no, false, `"require_triton":false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.RequireTriton = tt.set
			if o.RequiresTriton() != tt.requires {
				t.Errorf("RequiresTriton() = %v, want %v", o.RequiresTriton(), tt.requires)
			}
			data, err := json.Marshal(o.Canonical())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(data), "require_triton"); got != (tt.wire != "") ||
				(tt.wire != "" && !strings.Contains(string(data), tt.wire)) {
				t.Errorf("encoded %s, want %q", data, tt.wire)
			}
			if err := o.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
		})
	}
	// Canonical does not change the options DefaultOptions encodes (cache keys stay).
	a, _ := json.Marshal(DefaultOptions())
	b, _ := json.Marshal(DefaultOptions().Canonical())
	if string(a) != string(b) {
		t.Errorf("Canonical changed the defaults: %s vs %s", a, b)
	}
}

func TestRequiresIsCheckedAndCanonical(t *testing.T) {
	o := DefaultOptions()
	for _, r := range []Requires{{GPU: "--"}, {Torch: strings.Repeat("9", 65)}, {Triton: "\xff"}} {
		o.Requires = &r
		if err := o.Validate(); err == nil {
			t.Errorf("requires %+v accepted", r)
		}
	}
	o.Requires = &Requires{GPU: "NVIDIA H200", Torch: "2.11.0+cu130"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o.Requires = &Requires{}
	if o.Canonical().Requires != nil {
		t.Error("an empty requirement is kept: it would key the cache apart from none")
	}
}
