package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/tasks"
)

const searchLong = `Runs one AdaExplore search (or the refine or sample baseline) on a task: an LLM behind
any OpenAI-compatible endpoint proposes Triton kernels, the harness judges them. Every step is
logged to the Parquet table search_steps under --data, and stored in --data's queue store, so
--resume ID continues a search that was interrupted (killed, Ctrl-C, or failed) from its steps.

The best kernel is written to --out. --json prints one object at the end (search_id, state,
policy, steps, tokens, best: the best node's verdict with its code, actions) and nothing else.

Exit status: 0 when the search ran to its end (done or budget), whatever it found; 1 when it
could not run or ended "failed" (e.g. the LLM endpoint kept failing: the reason is in the
error and in the JSON); 2 for bad flags; 130 when interrupted (the search is cancelled and
its steps are logged).`

func newSearchCmd(g *globals) *cobra.Command {
	var (
		lf                   llmFlags
		taskFile, policy     string
		dataDir, out, resume string
		device               string
		steps, tokenBudget   int
		seed                 int64
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "search --task TASK.py --steps N --llm-url URL --model NAME [--policy adaexplore|refine|sample] [--json]",
		Short: "Search for a fast, correct Triton kernel for one task with an LLM (AdaExplore)",
		Long:  searchLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lc, err := lf.config()
			if err != nil {
				return err
			}
			req := runner.Request{Policy: policy, Steps: steps, TokenBudget: tokenBudget, Seed: seed}
			if resume == "" {
				if req.Reference, err = readTask(taskFile); err != nil {
					return err
				}
				if err := checkSearchFlags(req); err != nil {
					return err
				}
			}
			reg, _ := tasks.NewRegistry(nil, nil) // the task travels in the request
			s, err := g.openSearchStack(cmd.Context(), dataDir, device, lc, reg)
			if err != nil {
				return err
			}
			defer s.close()
			var st runner.Status
			if resume != "" {
				st, err = s.mgr.Resume(cmd.Context(), resume)
			} else {
				st, err = s.mgr.Start(cmd.Context(), req)
			}
			if errors.Is(err, runner.ErrBadRequest) || errors.Is(err, runner.ErrNotFound) {
				return usageError{err}
			} else if err != nil {
				return err
			}
			// On stderr, so that an interrupted search can be found again.
			fmt.Fprintf(g.stderr, "kernelgate: search %s (%s, %d steps; --resume %s continues it)\n",
				st.SearchID, st.Policy, st.StepsBudget, st.SearchID)
			progress := !asJSON && isTerminal(g.stderr)
			st, err = s.follow(cmd.Context(), st, progress, g.stderr)
			if err != nil {
				return err
			}
			return g.report(st, out, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&taskFile, "task", "", "the task: a KernelBench-format Python file (required unless --resume)")
	f.IntVar(&steps, "steps", 20, fmt.Sprintf("step budget (1..%d): LLM proposals and evaluations, failed ones included", runner.MaxSteps))
	f.StringVar(&policy, "policy", rollout.PolicyAdaExplore, "adaexplore, refine (one chain) or sample (independent samples)")
	f.IntVar(&tokenBudget, "token-budget", 0, "stop once prompt+completion tokens reach this (0: no limit)")
	f.Int64Var(&seed, "seed", 0, "random seed of the search")
	f.StringVar(&dataDir, "data", "./data", "data directory (queue store, Parquet log, skills.json)")
	f.StringVar(&out, "out", "", "where to write the best kernel (default best_<search id>.py)")
	f.StringVar(&resume, "resume", "", "continue the search with this id from its stored steps (--task, --steps and --policy are taken from it)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object at the end (no progress bar)")
	f.StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	lf.register(cmd, "required")
	return cmd
}

// checkSearchFlags catches bad flags before anything is opened (exit 2).
func checkSearchFlags(req runner.Request) error {
	switch {
	case req.Steps < 1 || req.Steps > runner.MaxSteps:
		return usageError{fmt.Errorf("--steps must be in 1..%d, got %d", runner.MaxSteps, req.Steps)}
	case req.Policy != rollout.PolicyAdaExplore && req.Policy != rollout.PolicyRefine && req.Policy != rollout.PolicySample:
		return usageError{fmt.Errorf("--policy must be adaexplore, refine or sample, got %q", req.Policy)}
	case req.TokenBudget < 0:
		return usageError{fmt.Errorf("--token-budget must be >= 0, got %d", req.TokenBudget)}
	}
	return nil
}

func readTask(path string) (string, error) {
	if path == "" {
		return "", usageError{errors.New("--task is required (or --resume ID)")}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usageError{fmt.Errorf("--task: %w", err)}
	}
	if len(b) > tasks.MaxSourceBytes {
		return "", usageError{fmt.Errorf("--task %s is %d bytes; at most %d", path, len(b), tasks.MaxSourceBytes)}
	}
	return string(b), nil
}

// report writes the best kernel and prints the result; a failed search is
// exit 1 (see searchLong).
func (g *globals) report(st runner.Status, out string, asJSON bool) error {
	if out == "" {
		out = "best_" + st.SearchID + ".py"
	}
	wrote := ""
	if st.Best != nil {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(st.Best.Code), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		wrote = out
	}
	if asJSON {
		if err := writeSearchJSON(g.stdout, st, wrote); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(g.stdout, summaryLine(st, wrote))
	}
	if st.State == runner.StateFailed {
		return fmt.Errorf("search %s failed: %s", st.SearchID, st.Error)
	}
	return nil
}

func summaryLine(st runner.Status, wrote string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "search %s: %s, %d/%d steps, %d tokens", st.SearchID, st.State, st.Steps, st.StepsBudget, st.TokensIn+st.TokensOut)
	if st.Best == nil {
		b.WriteString("; no kernel compiled")
	} else {
		fmt.Fprintf(&b, "; best node %d: %s%s", st.Best.Node, st.Best.Verdict.Status, speedupText(st.Best.Verdict.Speedup))
	}
	if wrote != "" {
		fmt.Fprintf(&b, "; written to %s", wrote)
	}
	return b.String()
}

func speedupText(sp *float64) string {
	if sp == nil {
		return ""
	}
	return fmt.Sprintf(" %.2fx", *sp)
}

// interrupted cancels the search after Ctrl-C and waits for it to end (its
// steps are then all logged).
func interrupted(ctx context.Context, s *searchStack, id string) error {
	if _, err := s.mgr.Cancel(context.Background(), id); err != nil {
		return err
	}
	_, _ = s.mgr.Wait(context.Background(), id)
	return ctx.Err()
}
