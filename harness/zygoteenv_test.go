package harness

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

// A parent environment as a gateway host has it: keys and tokens under every kind
// of name, next to what the toolchain needs.
var hostEnv = []string{
	"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "CC=/opt/gcc/bin/gcc",
	"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "KERNELGATE_PRECOMPILE=on",
	"OPENAI_API_KEY=sk-canary", "KERNELGATE_API_KEY=kg-canary", "KERNELGATE_NATS_TOKEN=nats-canary",
	"KERNELGATE_SESSION_TOKEN=kg-token-canary", "AWS_SECRET_ACCESS_KEY=aws-canary",
	"KG_CANARY_SECRET=kgcanary", "HF_TOKEN=hf-canary", "LD_PRELOAD=/tmp/evil.so",
	"PYTHONSTARTUP=/tmp/evil.py", "CUDA_SECRET=cuda-canary", "TRITON_TOKEN=triton-canary",
	"PYTHONPATH=/tmp/evil", "TRITON_INTERPRET=0", "CUDA_VISIBLE_DEVICES=3", "KERNELGATE_DATA_DIR=/elsewhere",
	"NOEQUALSIGN",
}

func TestZygoteEnvHoldsOnlyTheAllowlistAndTheHarnesssValues(t *testing.T) {
	tests := []struct {
		name string
		spec zygoteSpec
		want []string
	}{
		{"cpu", zygoteSpec{mode: eval.TimingCPUInterpreter, pythonPath: "/cache/py", dataDir: "/data"}, []string{
			"CC=/opt/gcc/bin/gcc", "CUDA_VISIBLE_DEVICES=", "HOME=/root", "KERNELGATE_DATA_DIR=/data",
			"KERNELGATE_PRECOMPILE=on", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
			"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "PATH=/usr/bin:/bin", "PYTHONPATH=/cache/py",
			"PYTHONUNBUFFERED=1", "TRITON_INTERPRET=1"}},
		{"gpu, no data dir", zygoteSpec{mode: eval.TimingGPU, deviceIndex: 1, pythonPath: "/cache/py"}, []string{
			"CC=/opt/gcc/bin/gcc", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=1", "HOME=/root",
			"KERNELGATE_PRECOMPILE=on", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
			"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "PATH=/usr/bin:/bin", "PYTHONPATH=/cache/py",
			"PYTHONUNBUFFERED=1"}},
		{"passed by name", zygoteSpec{mode: eval.TimingCPUInterpreter, pythonPath: "/p", passEnv: []string{"HF_TOKEN", "UNSET"}}, []string{
			"CC=/opt/gcc/bin/gcc", "CUDA_VISIBLE_DEVICES=", "HF_TOKEN=hf-canary", "HOME=/root",
			"KERNELGATE_PRECOMPILE=on", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
			"LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "PATH=/usr/bin:/bin", "PYTHONPATH=/p",
			"PYTHONUNBUFFERED=1", "TRITON_INTERPRET=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := zygoteEnv(hostEnv, tt.spec)
			if !slices.Equal(got, tt.want) {
				t.Errorf("zygoteEnv:\n got %q\nwant %q", got, tt.want)
			}
			if tt.spec.passEnv == nil && strings.Contains(strings.Join(got, "\n"), "canary") {
				t.Errorf("a secret passed: %q", got)
			}
		})
	}
}

// testdata/env/allowlist.json is the Python side's copy (harness/py/tests/test_environment.py).
func TestZygoteAllowlistGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/env/allowlist.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Allowlist []string `json:"allowlist"`
		Set       []string `json:"set"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(golden.Allowlist, zygoteAllowlist) {
		t.Errorf("testdata/env/allowlist.json's allowlist differs from zygoteAllowlist:\n golden %q\n    Go %q",
			golden.Allowlist, zygoteAllowlist)
	}
	var set []string
	for _, spec := range []zygoteSpec{{mode: eval.TimingCPUInterpreter, dataDir: "/d"}, {mode: eval.TimingGPU}} {
		for _, kv := range zygoteEnv(nil, spec) {
			if k, _, _ := strings.Cut(kv, "="); !slices.Contains(set, k) {
				set = append(set, k)
			}
		}
	}
	sort.Strings(set)
	if !slices.Equal(golden.Set, set) {
		t.Errorf("testdata/env/allowlist.json's set %q, zygoteEnv sets %q", golden.Set, set)
	}
}

func TestPassEnvFromTheEnvironment(t *testing.T) {
	var c Config
	if err := c.ApplyEnv(func(k string) string {
		return map[string]string{EnvPassEnv: " NCCL_DEBUG, ,CUDA_MPS_PIPE_DIRECTORY"}[k]
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"NCCL_DEBUG", "CUDA_MPS_PIPE_DIRECTORY"}; !slices.Equal(c.PassEnv, want) {
		t.Errorf("PassEnv %q, want %q", c.PassEnv, want)
	}
	if err := (Config{PassEnv: []string{"A=B"}}).Validate(); err == nil {
		t.Error("Validate accepted a pass-env name with '='")
	}
}
