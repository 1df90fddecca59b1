package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/rollout/skills"
	"github.com/kernelgate/kernelgate/tasks"
)

const adaptLong = `The adapt phase: runs one search per task of a suite, one after another, with one shared
skill memory (--data/skills.json), so the rules distilled from failures on early tasks are in
the prompts of later ones. Prints one line per task and a summary of the memory.
` + "`kernelgate tasks synth`" + ` makes suites for it.

In CPU mode (no GPU) a task whose evaluations cannot finish within the timeout in Triton's
interpreter (estimated from the manifest's figures or the task's meta-device pass) is
skipped, with a line saying why, before the first search starts; --force runs it.

Exit status: 0 when every search ran (whatever it found) or was skipped, 1 when one could
not run or ended "failed" (the rest still run) or every task was skipped, 2 for bad flags,
130 when interrupted.`

func newAdaptCmd(g *globals) *cobra.Command {
	var (
		lf                        llmFlags
		dir, policy, dataDir, dev string
		steps, tokenBudget        int
		seed                      int64
		force                     bool
	)
	cmd := &cobra.Command{
		Use:   "adapt --tasks DIR --steps N --llm-url URL --model NAME",
		Short: "Run the search over every task of a suite so that the skill memory grows",
		Long:  adaptLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lc, err := lf.config()
			if err != nil {
				return err
			}
			if err := checkSearchFlags(runner.Request{Steps: steps, Policy: policy, TokenBudget: tokenBudget}); err != nil {
				return err
			}
			suite, err := tasks.LoadSuites([]string{dir})
			if err != nil {
				return usageError{fmt.Errorf("--tasks: %w", err)}
			}
			if len(suite) == 0 {
				return usageError{fmt.Errorf("--tasks %s: no task files", dir)}
			}
			reg, err := tasks.NewRegistry(suite, nil)
			if err != nil {
				return usageError{err}
			}
			s, err := g.openSearchStack(cmd.Context(), dataDir, dev, lc, reg)
			if err != nil {
				return err
			}
			defer s.close()
			before, err := s.mem.Rules(cmd.Context())
			if err != nil {
				return err
			}
			skip := map[string]bool{}
			if s.sup.Mode() == eval.TimingCPUInterpreter && !force {
				if skip, err = fitAdaptCPU(cmd.Context(), g.stdout, s.sup, evalSlots(s.sup), suite, dir); err != nil {
					return err
				}
				if len(skip) == len(suite) {
					return fmt.Errorf("every task of %s is too large for CPU mode (%d skipped); run them on a GPU, or pass --force", dir, len(skip))
				}
			}
			var failed []string
			for i, t := range suite {
				if skip[t.ID] {
					continue
				}
				req := runner.Request{TaskID: t.ID, Policy: policy, Steps: steps, TokenBudget: tokenBudget, Seed: seed + int64(i),
					Options: searchOptions(s.sup)}
				st, err := s.mgr.Start(cmd.Context(), req)
				if err == nil {
					st, err = s.follow(cmd.Context(), st, false, g.stderr)
				}
				if errors.Is(err, context.Canceled) {
					return err
				}
				if err != nil {
					failed = append(failed, t.ID)
					fmt.Fprintf(g.stdout, "%s: could not run: %v\n", t.ID, err)
					continue
				}
				if st.State == runner.StateFailed {
					failed = append(failed, t.ID)
				}
				fmt.Fprintf(g.stdout, "%s: %s\n", t.ID, summaryLine(st, ""))
			}
			after, err := s.mem.Rules(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, memorySummary(before, after))
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d searches failed: %v", len(failed), len(suite), failed)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "tasks", "", "task suite directory (required); ids are DIRNAME/STEM")
	f.IntVar(&steps, "steps", 10, fmt.Sprintf("step budget per task (1..%d)", runner.MaxSteps))
	f.StringVar(&policy, "policy", rollout.PolicyAdaExplore, "adaexplore, refine or sample")
	f.IntVar(&tokenBudget, "token-budget", 0, "token budget per task (0: no limit)")
	f.Int64Var(&seed, "seed", 0, "random seed (task i uses seed+i)")
	f.StringVar(&dataDir, "data", "./data", "data directory (queue store, Parquet log, skills.json)")
	f.StringVar(&dev, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	f.BoolVar(&force, "force", false, forceHelp)
	_ = cmd.MarkFlagRequired("tasks")
	lf.register(cmd, "required")
	return cmd
}

// fitAdaptCPU says on w, one line per task, which tasks of the suite in dir
// the interpreter cannot evaluate within a search's timeout, and returns
// their ids; conc meta passes run at once. The error is ctx's.
func fitAdaptCPU(ctx context.Context, w io.Writer, ev evaluator, conc int, suite []tasks.Task, dir string) (map[string]bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	manifest := filepath.Join(filepath.Dir(abs), "manifest.json")
	targets := make([]workTarget, len(suite))
	for i, t := range suite {
		targets[i] = workTarget{Task: t.Harness(), Manifest: manifest, ID: t.ID}
	}
	opts := rollout.DefaultConfig().Options // what a search evaluates with
	sizes, err := newSizer(ev, opts).estimateAll(ctx, targets, conc)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for i, sz := range sizes {
		if sz.Err == nil && sz.Est.Over() {
			skip[suite[i].ID] = true
			fmt.Fprintf(w, "%s: skipped: %s\n", suite[i].ID, sz.Est.Refusal())
		}
	}
	return skip, nil
}

// memorySummary counts the rules this run created and the memory's state.
func memorySummary(before, after []skills.Rule) string {
	known := map[string]bool{}
	for _, r := range before {
		known[r.ID] = true
	}
	created, active, retired := 0, 0, 0
	for _, r := range after {
		if !known[r.ID] {
			created++
		}
		if r.Active() {
			active++
		} else {
			retired++
		}
	}
	return fmt.Sprintf("skills: %d created, %d active, %d retired (%d in memory)", created, active, retired, len(after))
}
