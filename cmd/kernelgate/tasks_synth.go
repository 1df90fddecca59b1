package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/gpu"
	"github.com/kernelgate/kernelgate/tasks/synth"
)

// gpuHere reports whether evaluations on this host would run on a GPU: one
// is visible to NVML (honouring CUDA_VISIBLE_DEVICES) and $KERNELGATE_DEVICE
// is not cpu. It decides `tasks synth --size auto`; tests replace it.
var gpuHere = func() bool {
	if os.Getenv(harness.EnvDevice) == "cpu" {
		return false
	}
	info, _ := gpu.Discover() // never fails: no GPU is a reason, not an error
	defer info.Close()
	return len(info.Devices) > 0
}

// synthSize is --size with auto resolved: gpu where a GPU is, else small
// (a GPU-size task cannot be evaluated in Triton's interpreter in time).
func synthSize(size string) string {
	if size != "auto" {
		return size
	}
	if gpuHere() {
		return "gpu"
	}
	return "small"
}

// newTasksSynthCmd wires `kernelgate tasks synth` to the synth package.
func newTasksSynthCmd(g *globals) *cobra.Command {
	var (
		n            int
		seed         int64
		out, size    string
		force, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "synth --n N --out DIR [--seed S] [--size auto|small|gpu]",
		Short: "Generate N synthetic tasks (random valid op chains) into DIR, byte-identical for the same flags",
		Long: "Composes random, valid chains of torch ops (GEMM, bmm, conv or plain input, then activations,\n" +
			"norms, softmax and reductions) into KernelBench-format task files, and writes DIR/" + synth.ManifestName + ".\n" +
			"Task i depends only on --seed, --size and i (its file name too: N_<ops>.py, whatever --n).\n" +
			"--size gpu: ~0.1-10 ms on an H200; small: tiny, for CPU mode and CI. The default, auto, depends\n" +
			"on the device here: gpu when a GPU is visible (and $" + harness.EnvDevice + " is not cpu), else small;\n" +
			"synth.json records the size used.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if n < 1 || n > synth.MaxN {
				return usageError{fmt.Errorf("--n must be in 1..%d, got %d", synth.MaxN, n)}
			}
			p, err := synth.LookupPreset(synthSize(size))
			if err != nil {
				return usageError{fmt.Errorf("--size %q: want auto, %s", size, synth.PresetNames)}
			}
			tasks := synth.GenerateAll(p, seed, n)
			printed := func(path string) {
				if !quiet {
					fmt.Fprintln(g.stdout, path)
				}
			}
			return synth.Write(out, tasks, synth.NewManifest(p, seed, tasks), force, printed)
		},
	}
	f := cmd.Flags()
	f.IntVar(&n, "n", 0, fmt.Sprintf("number of tasks (1..%d)", synth.MaxN))
	f.Int64Var(&seed, "seed", 0, "random seed")
	f.StringVar(&out, "out", "", "output directory (created if missing)")
	f.StringVar(&size, "size", "auto", "task sizes: "+synth.PresetNames+", or auto: gpu when a GPU is visible here, else small")
	f.BoolVar(&force, "force", false, "write even if DIR already holds .py files (overwrites, deletes nothing)")
	f.BoolVar(&quiet, "quiet", false, "do not print the files written")
	_ = cmd.MarkFlagRequired("n")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
