package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/batch"
)

func newBenchCmd(g *globals) *cobra.Command {
	var (
		jf                      jobFlags
		tasksDir, kernelsDir    string
		asJSON, fidelity, force bool
		repeat, concurrency     int
	)
	cmd := &cobra.Command{
		Use:   "bench --tasks DIR --kernels DIR",
		Short: "Evaluate every kernel against its task and report throughput, latency and verdicts",
		Long: `Evaluates every kernel against its task and reports throughput, latency and verdicts.
On a terminal a progress bar runs on stderr; elsewhere (a pipe, a CI log) stderr gets a
line per finished evaluation, and one every 15 s while none finishes. Ctrl-C prints the
report of the evaluations that finished, marked partial, and exits 130.

In CPU mode (no GPU) a task whose estimated time in Triton's interpreter is over the
timeout is skipped with a warning (--force runs it): from the manifest's figures, or the
task's meta-device pass.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := jf.options(cmd)
			if err != nil {
				return err
			}
			if repeat < 1 || concurrency < 0 {
				return usageError{fmt.Errorf("--repeat must be >= 1 and --concurrency >= 0")}
			}
			items, m, err := benchItems(tasksDir, kernelsDir)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			bo := batch.Options{Concurrency: concurrency, Repeat: repeat, Job: opts}
			var ev evaluator = interruptedEval{} // Ctrl-C while the zygote started: the report says nothing ran
			var skipped []string
			sup, err := g.supervisorFor(ctx, jf.device)
			switch {
			case err == nil:
				defer sup.Close()
				ev = sup
				bo.Job = jf.fitHost(opts, evalSlots(sup))
				if bo.Concurrency == 0 {
					bo.Concurrency = evalSlots(sup) // fill every zygote slot
				}
				if sup.Mode() == eval.TimingCPUInterpreter && !force {
					if items, skipped = fitBenchCPU(ctx, g.stderr, sup, items, bo); len(items) == 0 && ctx.Err() == nil {
						return fmt.Errorf("every task is too large for CPU mode (%d skipped); run them on a GPU, raise --timeout, or pass --force", len(skipped))
					}
				}
			case ctx.Err() == nil:
				return err
			}
			if !isTerminal(g.stderr) {
				total := len(items) * repeat
				if fidelity {
					total *= 2
				}
				lp, stop := startLineProgress(ctx, ev, g.stderr, total)
				defer stop()
				ev = lp
			} else if !asJSON {
				bo.Progress = g.stderr
			}
			rep, err := runBench(ctx, ev, items, bo, fidelity, m)
			// err is ctx's (Ctrl-C): print what was measured, marked
			// partial, then exit 130.
			if asJSON {
				return errors.Join(rep.WriteJSON(g.stdout), err)
			}
			werr := rep.WriteText(g.stdout)
			if len(skipped) > 0 {
				fmt.Fprintf(g.stdout, "skipped, too large for CPU mode (--force runs them): %s\n", strings.Join(skipped, ", "))
			}
			return errors.Join(werr, err)
		},
	}
	cmd.Flags().StringVar(&tasksDir, "tasks", "", "directory (or file) of KernelBench-format tasks (required)")
	cmd.Flags().StringVar(&kernelsDir, "kernels", "", "directory of candidate kernels, matched to tasks by file name (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (no progress bar)")
	cmd.Flags().IntVar(&repeat, "repeat", 1, "evaluate each pair K times (speedup spread)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "evaluations in flight (default: every zygote slot)")
	cmd.Flags().BoolVar(&fidelity, "fidelity", false, "bench at full concurrency, then at concurrency 1, and compare each kernel's median speedup")
	cmd.Flags().BoolVar(&force, "force", false, forceHelp)
	cmd.MarkFlagRequired("tasks")
	cmd.MarkFlagRequired("kernels")
	jf.register(cmd)
	return cmd
}

// interruptedEval stands in for the supervisor when Ctrl-C came while it
// started: batch.Run feeds it nothing, and the report is partial and empty.
type interruptedEval struct{}

func (interruptedEval) Evaluate(ctx context.Context, _ eval.Job) (eval.Verdict, error) {
	return eval.Verdict{}, ctx.Err()
}

// fitBenchCPU drops the items whose task the interpreter cannot evaluate
// within the timeout, with a warning on w for each such task, and returns
// the rest and the tasks dropped. A task it cannot size stays in.
func fitBenchCPU(ctx context.Context, w io.Writer, ev evaluator, items []batch.Item, bo batch.Options) ([]batch.Item, []string) {
	var targets []workTarget
	index := map[string]int{} // task path -> targets index
	for _, it := range items {
		if _, ok := index[it.Task.Path]; !ok {
			index[it.Task.Path] = len(targets)
			targets = append(targets, fileTarget(it.Task))
		}
	}
	fmt.Fprintf(w, "bench: CPU mode (no GPU): sizing %d tasks for Triton's interpreter\n", len(targets))
	sizes, err := newSizer(ev, bo.Job).estimateAll(ctx, targets, bo.Concurrency)
	if err != nil {
		return items, nil // interrupted: batch.Run reports it
	}
	var skipped []string
	for i, s := range sizes {
		switch {
		case s.Err != nil:
			fmt.Fprintf(w, "bench: no estimate of %s (%v); evaluating it anyway\n", targets[i].Task.Name, s.Err)
		case s.Est.Over():
			fmt.Fprintf(w, "bench: skipping %s: %s\n", targets[i].Task.Name, s.Est.Refusal())
			skipped = append(skipped, targets[i].Task.Name)
		}
	}
	kept := items[:0:0]
	for _, it := range items {
		if s := sizes[index[it.Task.Path]]; s.Err != nil || !s.Est.Over() {
			kept = append(kept, it)
		}
	}
	return kept, skipped
}

// runBench is one bench run, or a fidelity run's two; the error is ctx's.
func runBench(ctx context.Context, ev evaluator, items []batch.Item, bo batch.Options, fidelity bool, m datasets.Matching) (benchReport, error) {
	if fidelity {
		f, err := batch.RunFidelity(ctx, ev, items, bo)
		for _, p := range f.Passes {
			noteUnmatched(p.Report, m)
		}
		return f, err
	}
	r, err := batch.Run(ctx, ev, items, bo)
	noteUnmatched(r, m)
	return r, err
}

// benchReport is a bench report or a fidelity report.
type benchReport interface {
	WriteText(io.Writer) error
	WriteJSON(io.Writer) error
}

// noteUnmatched adds the files that matched nothing to a pass's report.
func noteUnmatched(rep *batch.Report, m datasets.Matching) {
	if rep == nil {
		return
	}
	for _, u := range m.UnmatchedKernels {
		rep.UnmatchedKernels = append(rep.UnmatchedKernels, u.Kernel+": "+u.Reason)
	}
	for _, t := range m.UnmatchedTasks {
		rep.UnmatchedTasks = append(rep.UnmatchedTasks, t.Name)
	}
}

// benchItems loads tasks and kernels and pairs them; no pair at all is an error.
func benchItems(tasksDir, kernelsDir string) ([]batch.Item, datasets.Matching, error) {
	tasks, err := datasets.Load(tasksDir)
	if err != nil {
		return nil, datasets.Matching{}, err
	}
	kernels, err := datasets.PyFiles(kernelsDir)
	if err != nil {
		return nil, datasets.Matching{}, fmt.Errorf("kernels: %w", err)
	}
	m := datasets.Match(tasks, kernels)
	if len(m.Pairs) == 0 {
		return nil, m, fmt.Errorf("no kernel in %s matches a task in %s (%d kernels, %d tasks)", kernelsDir, tasksDir, len(kernels), len(tasks))
	}
	items := make([]batch.Item, 0, len(m.Pairs))
	for _, p := range m.Pairs {
		code, err := os.ReadFile(p.Kernel)
		if err != nil {
			return nil, m, fmt.Errorf("kernel: %w", err)
		}
		t := p.Task
		items = append(items, batch.Item{
			Task: t, KernelFile: p.Kernel, Code: string(code),
		})
	}
	return items, m, nil
}
