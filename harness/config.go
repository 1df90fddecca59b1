package harness

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/hostmem"
)

// readHostMemory reads this host's memory for Config.HostMemoryMB's default;
// tests replace it.
var readHostMemory = hostmem.Host

// Config configures a Supervisor. The zero value plus ApplyEnv is usable;
// every zero field means its documented default.
type Config struct {
	// Python is the interpreter; "" resolves it (see ResolvePython).
	Python string
	// Device is "auto" (every visible GPU, else CPU; the default), "cpu",
	// or one NVML GPU index such as "0".
	Device string
	// Concurrency is the number of evaluations in flight per zygote.
	// 0 means 4 per GPU in GPU mode and runtime.NumCPU() in CPU mode.
	Concurrency int
	// DataDir, when set, is passed to the zygote as KERNELGATE_DATA_DIR.
	DataDir string
	// CacheDir is where the embedded Python package is extracted;
	// "" means os.UserCacheDir()/kernelgate.
	CacheDir string
	// StartTimeout bounds the wait for a zygote's hello (importing torch
	// takes 3–7 s). Default 60 s.
	StartTimeout time.Duration
	// KillGrace is added to a job's timeout_s before the supervisor stops
	// waiting for the zygote and kills the child itself. Default 30 s.
	KillGrace time.Duration
	// RestartBackoff is the first delay before restarting a dead zygote; it
	// doubles up to MaxRestartBackoff. Defaults 500 ms and 30 s.
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// LogLineLimit truncates re-logged zygote output lines. Default 2048.
	LogLineLimit int
	// PassEnv names variables of this process's environment that the zygotes
	// get beyond the allowlist (zygoteenv.go): for a host whose toolchain needs
	// one it lacks. Every process of an evaluation sees them, runners included:
	// never name a secret here.
	PassEnv []string
	// HostMemoryMB bounds the host memory that evaluations running at once may
	// hold together, their memory_limit_mb summed: an evaluation waits for its
	// share, and one that asks for more than the whole is held to the whole. 0
	// means eval.HostHeadroomPercent of the host's memory (or its cgroup's
	// limit), so that the gateway, NATS and the sink keep the rest; negative,
	// no bound.
	HostMemoryMB int
}

// Environment overrides, all in one place. Flags given on the command line
// win over these; these win over the defaults.
//
//	KERNELGATE_PYTHON         Config.Python
//	KERNELGATE_DEVICE         Config.Device ("auto", "cpu", "N")
//	KERNELGATE_CONCURRENCY    Config.Concurrency
//	KERNELGATE_DATA_DIR       Config.DataDir
//	KERNELGATE_CACHE_DIR      Config.CacheDir
//	KERNELGATE_START_TIMEOUT  Config.StartTimeout (Go duration, e.g. "90s")
//	KERNELGATE_PASS_ENV       Config.PassEnv (comma-separated names)
const (
	EnvPython       = "KERNELGATE_PYTHON"
	EnvDevice       = "KERNELGATE_DEVICE"
	EnvConcurrency  = "KERNELGATE_CONCURRENCY"
	EnvDataDir      = "KERNELGATE_DATA_DIR"
	EnvCacheDir     = "KERNELGATE_CACHE_DIR"
	EnvStartTimeout = "KERNELGATE_START_TIMEOUT"
	EnvPassEnv      = "KERNELGATE_PASS_ENV"
)

// ApplyEnv sets fields from the KERNELGATE_* variables that getenv returns
// non-empty (pass os.Getenv; tests pass a map lookup).
func (c *Config) ApplyEnv(getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	setStr := func(dst *string, key string) {
		if v := getenv(key); v != "" {
			*dst = v
		}
	}
	setStr(&c.Python, EnvPython)
	setStr(&c.Device, EnvDevice)
	setStr(&c.DataDir, EnvDataDir)
	setStr(&c.CacheDir, EnvCacheDir)
	if v := getenv(EnvConcurrency); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("harness.Config: %s=%q: not an integer", EnvConcurrency, v)
		}
		c.Concurrency = n
	}
	if v := getenv(EnvPassEnv); v != "" {
		c.PassEnv = nil
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				c.PassEnv = append(c.PassEnv, name)
			}
		}
	}
	if v := getenv(EnvStartTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("harness.Config: %s=%q: %w", EnvStartTimeout, v, err)
		}
		c.StartTimeout = d
	}
	return nil
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Device == "" {
		c.Device = "auto"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.KillGrace == 0 {
		c.KillGrace = 30 * time.Second
	}
	if c.RestartBackoff == 0 {
		c.RestartBackoff = 500 * time.Millisecond
	}
	if c.MaxRestartBackoff == 0 {
		c.MaxRestartBackoff = 30 * time.Second
	}
	if c.LogLineLimit == 0 {
		c.LogLineLimit = 2048
	}
	if c.HostMemoryMB == 0 {
		if m, err := readHostMemory(); err == nil {
			c.HostMemoryMB = eval.HostHeadroomMB(m.Bytes)
		}
	}
	return c
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	var errs []error
	if c.Device != "" && c.Device != "auto" && c.Device != "cpu" {
		if n, err := strconv.Atoi(c.Device); err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("device must be auto, cpu or a GPU index, got %q", c.Device))
		}
	}
	if c.Concurrency < 0 || c.Concurrency > 1024 {
		errs = append(errs, fmt.Errorf("concurrency must be in 0..1024 (0 = default), got %d", c.Concurrency))
	}
	if c.StartTimeout < 0 || c.KillGrace < 0 || c.RestartBackoff < 0 || c.MaxRestartBackoff < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if c.LogLineLimit < 0 {
		errs = append(errs, fmt.Errorf("log line limit must be >= 0, got %d", c.LogLineLimit))
	}
	for _, name := range c.PassEnv {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			errs = append(errs, fmt.Errorf("pass-env: %q is not a variable name", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("harness.Config: %w", err)
	}
	return nil
}
