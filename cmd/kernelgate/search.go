package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/tasks"
)

const searchLong = `Runs one AdaExplore search (or the refine or sample baseline) on a task: an LLM behind
any OpenAI-compatible endpoint proposes Triton kernels, the harness judges them. Every step is
logged to the Parquet table search_steps under --data, and stored in --data's queue store, so
--resume ID continues a search that was interrupted (killed, Ctrl-C, or failed) from its steps;
with --steps N it also extends the search's budget to N steps (a search that had spent its
budget runs the extra ones). A task file of a suite under datasets/ is logged under its suite
id (ci/1_add_relu), any other under api/<hash>.

The best kernel is written to --out. --json prints one object at the end (search_id, state,
policy, steps, tokens, best: the best node's verdict with its code, actions) and nothing else.

Exit status: 0 when the search ran to its end (done or budget), whatever it found; 1 when it
could not run or ended "failed" (e.g. the LLM endpoint kept failing: the reason is in the
error and in the JSON); 2 for bad flags (a --steps below a resumed search's budget too); 130
when interrupted (the search is cancelled, its steps are logged, the best kernel so far is
written to --out and the command line that resumes it is printed on stderr).`

func newSearchCmd(g *globals) *cobra.Command {
	var (
		lf                   llmFlags
		taskFile, policy     string
		dataDir, out, resume string
		device               string
		steps, tokenBudget   int
		seed                 int64
		asJSON, force        bool
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
			if err := checkSearchFlags(req); err != nil {
				return err
			}
			if out != "" {
				if err := canWrite(filepath.Dir(out)); err != nil {
					return usageError{fmt.Errorf("--out: %w", err)}
				}
			}
			reg, _ := tasks.NewRegistry(nil, nil) // a resumed search's task is in its record
			if resume == "" {
				if reg, err = g.searchTask(cmd.Context(), taskFile, &req); err != nil {
					return err
				}
			}
			s, err := g.openSearchStack(cmd.Context(), dataDir, device, lc, reg)
			if err != nil {
				return err
			}
			defer s.close()
			req.Options = searchOptions(s.sup)
			if resume == "" && s.sup.Mode() == eval.TimingCPUInterpreter {
				if err := fitSearchCPU(cmd.Context(), g.stderr, s.sup, taskFile, force); err != nil {
					return err
				}
			}
			st, err := g.startSearch(cmd, s, req, resume)
			if err != nil {
				return err
			}
			progress := !asJSON && isTerminal(g.stderr)
			st, err = s.follow(cmd.Context(), st, progress, g.stderr)
			if errors.Is(err, context.Canceled) {
				g.reportInterrupted(cmd, st, out)
			}
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
	f.StringVar(&resume, "resume", "", "continue the search with this id from its stored steps (--task and --policy are taken from it; a larger --steps extends its budget)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object at the end (no progress bar)")
	f.BoolVar(&force, "force", false, forceHelp)
	f.StringVar(&device, "device", "", "GPU index N or cpu (default: every GPU, else cpu; $KERNELGATE_DEVICE)")
	lf.register(cmd, "required")
	return cmd
}

// startSearch starts the search, or resumes search resume (--steps, when
// given, is its new budget), and says on stderr which one it is, so that
// an interrupted search can be found again.
func (g *globals) startSearch(cmd *cobra.Command, s *searchStack, req runner.Request, resume string) (runner.Status, error) {
	var st runner.Status
	var err error
	if resume == "" {
		st, err = s.mgr.Start(cmd.Context(), req)
	} else {
		budget := 0 // keep it
		if cmd.Flags().Changed("steps") {
			budget = req.Steps
		}
		st, err = s.mgr.Resume(cmd.Context(), resume, budget)
	}
	if errors.Is(err, runner.ErrBadRequest) || errors.Is(err, runner.ErrNotFound) {
		return st, usageError{err}
	} else if err != nil {
		return st, err
	}
	switch {
	case resume == "":
		fmt.Fprintf(g.stderr, "kernelgate: search %s (%s, %d steps; --resume %s continues it)\n",
			st.SearchID, st.Policy, st.StepsBudget, st.SearchID)
	case st.State == runner.StateRunning:
		fmt.Fprintf(g.stderr, "kernelgate: search %s resumed (%s, %d of %d steps taken)\n",
			st.SearchID, st.Policy, st.Steps, st.StepsBudget)
	default:
		hint := ""
		if st.State == runner.StateDone {
			hint = "; a larger --steps extends it"
		}
		fmt.Fprintf(g.stderr, "kernelgate: search %s had ended (%s, %d/%d steps)%s\n",
			st.SearchID, st.State, st.Steps, st.StepsBudget, hint)
	}
	return st, nil
}

// searchTask reads --task into req. A task of a suite under datasets/
// goes by its registry id (found by source, as the gateway finds an inline
// reference's), so that its rows carry ci/1_add_relu as those of adapt and
// /v1/searches do; any other file goes inline (api/<hash>). The registry
// returned holds those suites.
func (g *globals) searchTask(ctx context.Context, path string, req *runner.Request) (*tasks.Registry, error) {
	src, err := readTask(path)
	if err != nil {
		return nil, err
	}
	reg, err := suiteRegistry(path)
	if err != nil {
		if log, lerr := g.logger(); lerr == nil {
			log.Warn("task suites not loaded; the task goes by its source (api/<hash>)", "err", err)
		}
		reg, _ = tasks.NewRegistry(nil, nil)
	}
	if t, ok, _ := reg.ByHash(ctx, eval.HashSource(src)); ok { // the task file enters here
		req.TaskID = t.ID
	} else {
		req.Reference = src
	}
	return reg, nil
}

// suiteRegistry loads the suites of the datasets/ the task file lies in
// (datasets/SUITE/NAME.py), else those serve loads by default (datasets/
// next to the working directory or the binary).
func suiteRegistry(taskFile string) (*tasks.Registry, error) {
	wd, _ := os.Getwd()
	exe, _ := os.Executable()
	if abs, err := filepath.Abs(taskFile); err == nil {
		if root := filepath.Dir(filepath.Dir(abs)); filepath.Base(root) == "datasets" {
			wd, exe = filepath.Dir(root), ""
		}
	}
	suite, err := tasks.LoadSuites(tasks.DefaultDirs(wd, exe))
	if err != nil {
		return nil, err
	}
	return tasks.NewRegistry(suite, nil)
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
	wrote, err := writeBest(st, out)
	if err != nil {
		return err
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

// writeBest writes the best kernel to out (default best_<id>.py) and
// returns where; "" when no kernel compiled.
func writeBest(st runner.Status, out string) (string, error) {
	if st.Best == nil {
		return "", nil
	}
	if out == "" {
		out = "best_" + st.SearchID + ".py"
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("--out: %w", err)
	}
	if err := os.WriteFile(out, []byte(st.Best.Code), 0o644); err != nil {
		return "", fmt.Errorf("--out: %w", err)
	}
	return out, nil
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
// steps are then all logged); it returns the search as it ended.
func interrupted(ctx context.Context, s *searchStack, id string) (runner.Status, error) {
	if _, err := s.mgr.Cancel(context.Background(), id); err != nil {
		return runner.Status{}, err
	}
	st, _ := s.mgr.Wait(context.Background(), id)
	return st, ctx.Err()
}

// reportInterrupted writes the best kernel found before Ctrl-C where a
// finished search writes it, and says on stderr where it went and how to
// go on; the exit status stays 130.
func (g *globals) reportInterrupted(cmd *cobra.Command, st runner.Status, out string) {
	if st.SearchID == "" {
		return
	}
	wrote, err := writeBest(st, out)
	head := fmt.Sprintf("kernelgate: search %s stopped after %d/%d steps", st.SearchID, st.Steps, st.StepsBudget)
	switch {
	case err != nil:
		fmt.Fprintf(g.stderr, "%s; the best kernel was not written: %v\n", head, err)
	case st.Best == nil:
		fmt.Fprintf(g.stderr, "%s; no kernel compiled yet, nothing written\n", head)
	case !st.Best.Verdict.Correct:
		fmt.Fprintf(g.stderr, "%s; no correct kernel yet: the best so far (node %d, %s) written to %s\n",
			head, st.Best.Node, st.Best.Verdict.Status, wrote)
	default:
		fmt.Fprintf(g.stderr, "%s; best kernel (node %d, %s%s) written to %s\n",
			head, st.Best.Node, st.Best.Verdict.Status, speedupText(st.Best.Verdict.Speedup), wrote)
	}
	fmt.Fprintf(g.stderr, "kernelgate: continue it with: %s\n", resumeLine(cmd, st.SearchID))
}

// resumeLine is the command line that continues search id: this one's
// flags, less those the search keeps (its task, budget, policy and seed).
func resumeLine(cmd *cobra.Command, id string) string {
	parts := []string{cmd.Root().Name(), cmd.Name(), "--resume", id}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case f.Name == "task" || f.Name == "steps" || f.Name == "policy" || f.Name == "token-budget" ||
			f.Name == "seed" || f.Name == "resume":
		case f.Value.Type() == "bool" && f.Value.String() == "true":
			parts = append(parts, "--"+f.Name)
		case f.Value.Type() == "bool":
			parts = append(parts, "--"+f.Name+"="+f.Value.String())
		default:
			parts = append(parts, "--"+f.Name, shellQuote(f.Value.String()))
		}
	})
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fitSearchCPU is search's gate in CPU mode, eval's (fitsCPU) at the search's
// default options: a task the interpreter cannot finish within the timeout
// would spend every step's LLM call on a timeout.
func fitSearchCPU(ctx context.Context, w io.Writer, ev evaluator, taskFile string, force bool) error {
	found, err := datasets.Load(taskFile)
	if err != nil || len(found) != 1 {
		return nil // the search reports what is wrong with the file
	}
	t := found[0]
	return fitsCPU(ctx, w, ev, fileTarget(t), eval.DefaultOptions(), force)
}
