package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/batch"
	"github.com/spf13/cobra"
)

func newBenchCmd(g *globals) *cobra.Command {
	var (
		jf                   jobFlags
		tasksDir, kernelsDir string
		asJSON, fidelity     bool
		repeat, concurrency  int
	)
	cmd := &cobra.Command{
		Use:   "bench --tasks DIR --kernels DIR",
		Short: "Evaluate every kernel against its task and report throughput, latency and verdicts",
		Args:  cobra.NoArgs,
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
			sup, err := g.supervisorFor(cmd.Context(), jf.device)
			if err != nil {
				return err
			}
			defer sup.Close()
			opts = jf.fitHost(opts, evalSlots(sup))
			bo := batch.Options{Concurrency: concurrency, Repeat: repeat, Job: opts}
			if bo.Concurrency == 0 {
				for _, z := range sup.Stats() {
					bo.Concurrency += z.Concurrency // fill every zygote slot
				}
			}
			if !asJSON && isTerminal(g.stderr) {
				bo.Progress = g.stderr
			}
			var rep benchReport
			if fidelity {
				f, runErr := batch.RunFidelity(cmd.Context(), sup, items, bo)
				for _, p := range f.Passes {
					noteUnmatched(p.Report, m)
				}
				rep, err = f, runErr
			} else {
				r, runErr := batch.Run(cmd.Context(), sup, items, bo)
				noteUnmatched(r, m)
				rep, err = r, runErr
			}
			// err is ctx's (Ctrl-C): print what was measured, marked
			// partial, then exit 130.
			if asJSON {
				return errors.Join(rep.WriteJSON(g.stdout), err)
			}
			return errors.Join(rep.WriteText(g.stdout), err)
		},
	}
	cmd.Flags().StringVar(&tasksDir, "tasks", "", "directory (or file) of KernelBench-format tasks (required)")
	cmd.Flags().StringVar(&kernelsDir, "kernels", "", "directory of candidate kernels, matched to tasks by file name (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (no progress bar)")
	cmd.Flags().IntVar(&repeat, "repeat", 1, "evaluate each pair K times (speedup spread)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "evaluations in flight (default: every zygote slot)")
	cmd.Flags().BoolVar(&fidelity, "fidelity", false, "bench at full concurrency, then at concurrency 1, and compare each kernel's median speedup")
	cmd.MarkFlagRequired("tasks")
	cmd.MarkFlagRequired("kernels")
	jf.register(cmd)
	return cmd
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
			Task: harness.Task{Name: t.Name, Path: t.Path, Source: t.Source}, KernelFile: p.Kernel, Code: string(code),
		})
	}
	return items, m, nil
}
