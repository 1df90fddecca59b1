package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
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
		{"24 GiB, 2 CPU slots", 24 * gib, 2, 12288},
		{"this dev host's MemTotal, 2 slots", 24683656 << 10, 2, 12052},
		{"H200 host: 128 GiB, 16 slots", 128 * gib, 16, 8192},
		{"one slot gets the host", 24 * gib, 1, 24576},
		{"zero slots count as one", 24 * gib, 0, 24576},
		{"floored: 8 GiB, 16 slots", 8 * gib, 16, MinHostMemoryMB},
		{"floored: nothing known", 0, 4, MinHostMemoryMB},
		{"rounds down", 3*gib + 1, 2, 1536},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HostMemoryMB(tt.hostBytes, tt.slots); got != tt.want {
				t.Errorf("HostMemoryMB(%d, %d) = %d, want %d", tt.hostBytes, tt.slots, got, tt.want)
			}
		})
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

func TestConfigEnvAndValidate(t *testing.T) {
	env := map[string]string{
		EnvPython: "/opt/py", EnvDevice: "cpu", EnvConcurrency: "3", EnvStartTimeout: "90s",
	}
	var c Config
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Python != "/opt/py" || c.Device != "cpu" || c.Concurrency != 3 || c.StartTimeout != 90*time.Second {
		t.Errorf("ApplyEnv: %+v", c)
	}
	bad := map[string]string{EnvConcurrency: "many"}
	if err := new(Config).ApplyEnv(func(k string) string { return bad[k] }); err == nil {
		t.Error("ApplyEnv accepted a non-integer concurrency")
	}
	for _, tt := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true}, {Config{Device: "auto"}, true}, {Config{Device: "2"}, true},
		{Config{Device: "gpu"}, false}, {Config{Concurrency: -1}, false},
	} {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v", tt.cfg, err)
		}
	}
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	br := bufio.NewReaderSize(strings.NewReader("a\n"+long+"\nb\nc"), 16)
	want := []struct {
		line string
		err  error
	}{{"a", nil}, {"", errLineTooLong}, {"b", nil}}
	for i, w := range want {
		got, err := readLine(br, 50)
		if string(got) != w.line || !errors.Is(err, w.err) {
			t.Errorf("line %d: %q %v, want %q %v", i, got, err, w.line, w.err)
		}
	}
	if _, err := readLine(br, 50); err == nil {
		t.Error("an unterminated last line must not be a record")
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
