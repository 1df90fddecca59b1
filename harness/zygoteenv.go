package harness

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// The zygote's environment is built from an allowlist, never inherited whole:
// everything the zygote has, its judges, runners, reference hosts and their
// children have too, and a runner runs task and candidate code that can print
// its environment into an exception, hence into a verdict's feedback and the
// Parquet log. So the gateway's keys and tokens (an LLM key, KERNELGATE_API_KEY,
// KERNELGATE_NATS_TOKEN, a host's cloud credentials) never reach a runner,
// whatever they are named: only the names below pass, plus the values the
// harness sets itself (zygoteEnv) and what an operator names in
// Config.PassEnv. docs/threat-model.md describes what a runner's environment holds.
//
// Each name is here because Python, torch, Triton, CUDA or the harness's own
// Python side reads it; TestZygoteAllowlistGolden holds this list to
// testdata/env/allowlist.json, which the Python side tests against (every
// KERNELGATE_* variable kgharness reads must be on it).
var zygoteAllowlist = []string{
	// The process: tools on PATH (cc, ldconfig), the user's home and temp dir
	// (runners get their own of both), locale and time zone.
	"PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ",
	"LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
	"LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
	// Libraries and the C compiler Triton builds its launchers with (an image
	// may keep libcuda or gcc off the default paths: CC=/opt/gcc/bin/gcc).
	"LD_LIBRARY_PATH", "CC", "CXX",
	// Python.
	"PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE",
	// torch's CPU threads and CUDA allocator, CUDA's toolkit and loading.
	"OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF",
	"CUDA_HOME", "CUDA_PATH", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING",
	// Where Triton finds its tools (kgharness/sandbox/readpaths.py grants them read-only).
	"TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH",
	"TRITON_LIBDEVICE_PATH", "TRITON_LIBCUDA_PATH",
	// The harness's own settings, read by the zygote and its judges (runners
	// drop every KERNELGATE_* variable once their walls are up).
	"KERNELGATE_SANDBOX_READ", "KERNELGATE_PRECOMPILE", "KERNELGATE_PRECOMPILE_IN_WINDOWS",
	"KERNELGATE_SHARED_LAUNCHERS", "KERNELGATE_REFERENCE_HOST", "KERNELGATE_SHARE_REFERENCE",
	"KERNELGATE_EARLY_CONTEXTS", "KERNELGATE_ADMISSION_LOG",
}

// zygoteEnv is the zygote's environment: the allowlisted variables of base
// (the parent's), those named in spec.passEnv, and the protocol's own values,
// which win over anything base says.
func zygoteEnv(base []string, spec zygoteSpec) []string {
	set := map[string]string{"PYTHONPATH": spec.pythonPath, "PYTHONUNBUFFERED": "1"}
	if spec.mode == eval.TimingGPU {
		set["CUDA_VISIBLE_DEVICES"] = strconv.Itoa(spec.deviceIndex)
		// NVML numbers GPUs in PCI bus order; make CUDA agree.
		set["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	} else {
		set["TRITON_INTERPRET"] = "1"
		set["CUDA_VISIBLE_DEVICES"] = "" // CPU mode means CPU even on a GPU host
	}
	if spec.dataDir != "" {
		// The zygote keeps every Landlock grant out of it (kgharness/sandbox/readpaths.py).
		set["KERNELGATE_DATA_DIR"] = spec.dataDir
	}
	pass := make(map[string]bool, len(zygoteAllowlist)+len(spec.passEnv))
	for _, k := range zygoteAllowlist {
		pass[k] = true
	}
	for _, k := range spec.passEnv {
		pass[k] = true
	}
	env := make([]string, 0, len(pass)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := set[k]; pass[k] && !ours {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
