package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/submission"
)

// jobFlags are the evaluation options shared by eval and bench.
type jobFlags struct {
	seeds         int
	atol, rtol    float64
	timeout       int
	compileS      int
	budgetMS      int
	memoryMB      int
	requireTriton bool
	device        string
	cmd           *cobra.Command
}

func (f *jobFlags) register(cmd *cobra.Command) {
	d := eval.DefaultOptions()
	cmd.Flags().IntVar(&f.seeds, "seeds", d.Seeds, "correctness trials (1..100)")
	cmd.Flags().Float64Var(&f.atol, "atol", 0, "absolute tolerance (default: by the reference output dtype)")
	cmd.Flags().Float64Var(&f.rtol, "rtol", 0, "relative tolerance (default: by the reference output dtype)")
	cmd.Flags().IntVar(&f.timeout, "timeout", d.TimeoutS, "per-evaluation wall-clock limit in seconds (1..3600)")
	cmd.Flags().IntVar(&f.compileS, "compile-timeout", 0, "budget in seconds for the kernel's load and first call: import, Triton JIT, autotune (0: 90 on a GPU, none on a CPU)")
	cmd.Flags().IntVar(&f.budgetMS, "timing-budget-ms", d.TimingBudgetMS, "wall time per timed model on the GPU (1..60000)")
	cmd.Flags().IntVar(&f.memoryMB, "memory-limit-mb", 0, fmt.Sprintf("host RSS limit per evaluation in MiB (default: 75%% of the host's memory over the evaluation slots, at least %d, at most %d)",
		eval.MinHostMemoryMB, eval.DefaultMemoryLimitMB))
	cmd.Flags().BoolVar(&f.requireTriton, "require-triton", true, "flag a kernel that launches none of its own Triton kernels (no_triton); false judges and times pure-PyTorch code too")
	cmd.Flags().StringVar(&f.device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $"+harness.EnvDevice+")")
	f.cmd = cmd
}

func (f *jobFlags) options(cmd *cobra.Command) (eval.Options, error) {
	o := eval.DefaultOptions()
	o.Seeds, o.TimeoutS, o.TimingBudgetMS, o.CompileTimeoutS = f.seeds, f.timeout, f.budgetMS, f.compileS
	if cmd.Flags().Changed("atol") {
		o.Atol = &f.atol
	}
	if cmd.Flags().Changed("rtol") {
		o.Rtol = &f.rtol
	}
	if cmd.Flags().Changed("memory-limit-mb") {
		o.MemoryLimitMB = f.memoryMB
	}
	if !f.requireTriton {
		o.RequireTriton = &f.requireTriton
	}
	if err := o.Validate(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// fitHost gives o the host's memory_limit_mb unless --memory-limit-mb was
// given: min(32768, 75% of the host's memory over the slots evaluations run in at
// once, evalSlots), as serve's default for a request.
func (f *jobFlags) fitHost(o eval.Options, slots int) eval.Options {
	if f.cmd.Flags().Changed("memory-limit-mb") {
		return o
	}
	mb, _, err := hostMemoryMB(slots)
	if err != nil {
		fmt.Fprintf(f.cmd.ErrOrStderr(), "kernelgate: host memory unknown (%v); memory_limit_mb %d\n", err, mb)
	}
	o.MemoryLimitMB = min(o.MemoryLimitMB, mb)
	return o
}

func newEvalCmd(g *globals) *cobra.Command {
	var (
		jf               jobFlags
		taskPath, kernel string
		asJSON, force    bool
	)
	cmd := &cobra.Command{
		Use:   "eval --task TASK.py --kernel KERNEL.py",
		Short: "Evaluate one kernel against one task and print its verdict",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := jf.options(cmd)
			if err != nil {
				return err
			}
			tasks, err := datasets.Load(taskPath)
			if err != nil {
				return err
			}
			if len(tasks) != 1 {
				return usageError{fmt.Errorf("--task %s: want one file, found %d tasks", taskPath, len(tasks))}
			}
			// A file without code is the caller's mistake, unless the task's
			// reference is broken: that is said first, as the gateway would.
			code, how, noCode := readKernel(kernel, cmd.ErrOrStderr())
			if ue, ok := errors.AsType[usageError](noCode); noCode != nil && !(ok && errors.Is(ue.error, submission.ErrNoCode)) {
				return noCode
			}
			sup, err := g.supervisorFor(cmd.Context(), jf.device)
			if err != nil {
				return err
			}
			defer sup.Close()
			opts = jf.fitHost(opts, evalSlots(sup))
			t := tasks[0]
			if sup.Mode() == eval.TimingCPUInterpreter {
				if err := fitsCPU(cmd.Context(), g.stderr, sup, fileTarget(t), opts, force); err != nil {
					return err
				}
			}
			v, err := sup.Evaluate(cmd.Context(), eval.Job{
				Task: t, Code: code, Options: opts,
			})
			if err != nil {
				return err
			}
			if noCode != nil && v.TaskError == "" {
				return noCode
			}
			if how != submission.HowText {
				// A saved completion, worded as the gateway words one (a cut-off
				// completion is invalid_submission, truncated); plain code is
				// taken as code, as the gateway takes codes.
				if raw, err := os.ReadFile(kernel); err == nil {
					v = submission.Word(string(raw), "", v)
				}
			}
			if err := printVerdict(g.stdout, v, asJSON); err != nil {
				return err
			}
			if v.TaskError != "" {
				return errors.New("task error: " + oneLine(v.TaskError))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&taskPath, "task", "", "KernelBench-format task file (required)")
	cmd.Flags().StringVar(&kernel, "kernel", "", "candidate file defining ModelNew (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	cmd.Flags().BoolVar(&force, "force", false, forceHelp)
	cmd.MarkFlagRequired("task")
	cmd.MarkFlagRequired("kernel")
	jf.register(cmd)
	return cmd
}

func printVerdict(w io.Writer, v eval.Verdict, asJSON bool) error {
	if asJSON {
		return writeJSON(w, v)
	}
	fmt.Fprintf(w, "status:   %s (compiled %v, trials %d/%d)\n", v.Status, v.Compiled, v.TrialsPassed, v.TrialsTotal)
	switch {
	case v.Speedup != nil && v.Runtime != nil && v.RefRuntime != nil:
		fmt.Fprintf(w, "speedup:  %.3fx (kernel %.4f ms, reference %.4f ms, spread %.3f)\n",
			*v.Speedup, v.Runtime.MedianMS, v.RefRuntime.MedianMS, v.Runtime.Spread)
	case v.TimingMode != eval.TimingGPU:
		fmt.Fprintf(w, "timing:   not comparable (%s)\n", v.TimingMode)
	}
	if v.MaxAbsError != nil && v.Tolerance != nil {
		fmt.Fprintf(w, "error:    max abs %.3g, max rel %.3g (atol %g, rtol %g, %s)\n",
			*v.MaxAbsError, deref(v.MaxRelError), v.Tolerance.Atol, v.Tolerance.Rtol, v.Tolerance.DType)
	}
	if len(v.HackFlags) > 0 {
		fmt.Fprintf(w, "flags:    %s\n", strings.Join(v.HackFlags, ", "))
	}
	for _, s := range v.Warnings {
		fmt.Fprintf(w, "warning:  %s\n", s)
	}
	if v.TaskError != "" {
		fmt.Fprintf(w, "task:     %s\n", v.TaskError)
	}
	if v.Feedback != "" {
		fmt.Fprintf(w, "feedback:\n%s\n", indent(v.Feedback))
	}
	fmt.Fprintf(w, "env:      %s, torch %s, triton %s, sandbox %s\n", v.Env.Device, v.Env.Torch, v.Env.Triton, v.Env.Sandbox)
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
