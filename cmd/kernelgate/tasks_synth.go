package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/tasks/synth"
)

// newTasksSynthCmd wires `kernelgate tasks synth` to the synth package.
func newTasksSynthCmd(g *globals) *cobra.Command {
	var (
		n            int
		seed         int64
		out, size    string
		force, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "synth --n N --out DIR [--seed S] [--size small|gpu]",
		Short: "Generate N synthetic tasks (random valid op chains) into DIR, byte-identical for the same flags",
		Long: "Composes random, valid chains of torch ops (GEMM, bmm, conv or plain input, then activations,\n" +
			"norms, softmax and reductions) into KernelBench-format task files, and writes DIR/" + synth.ManifestName + ".\n" +
			"Task i depends only on --seed, --size and i. --size gpu: ~0.1-10 ms on an H200; small: tiny, for CPU CI.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if n < 1 || n > synth.MaxN {
				return usageError{fmt.Errorf("--n must be in 1..%d, got %d", synth.MaxN, n)}
			}
			p, err := synth.LookupPreset(size)
			if err != nil {
				return usageError{fmt.Errorf("--size: %w", err)}
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
	f.StringVar(&size, "size", "gpu", "task sizes: "+synth.PresetNames)
	f.BoolVar(&force, "force", false, "write even if DIR already holds .py files (overwrites, deletes nothing)")
	f.BoolVar(&quiet, "quiet", false, "do not print the files written")
	_ = cmd.MarkFlagRequired("n")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
