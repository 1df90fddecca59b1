package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/redteam"
)

// canaryEnv is the variable that carries a planted secret in this
// process's environment during a red-team run: off the zygote's allowlist,
// so a verdict that carries it shows an environment leak.
const canaryEnv = "REDTEAM_CANARY_SECRET"

func newRedteamCmd(g *globals) *cobra.Command {
	var (
		jf                      jobFlags
		taskDir, solDir, outDir string
		classes                 string
		asJSON                  bool
		concurrency             int
	)
	cmd := &cobra.Command{
		Use:   "redteam --tasks DIR --solutions DIR",
		Short: "Attack a task suite with generated reward hacks and report what the harness caught",
		Long: `For each task in --tasks with an honest solution of the same file name in
--solutions, generates one attack variant per class (redteam/attacks, docs/redteam.md)
from that solution and evaluates every variant, and the untransformed solution as an
honest control, through the harness with the job options given (as eval does).

A variant is caught when it is not judged correct, gets no speedup and its verdict
carries none of the secrets planted for the run (files in the temp dir and /dev/shm, an
environment variable). A miss's source is written under --out for a regression
fixture. The exit status is 1 when any variant is missed, any control is not correct
or any evaluation could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := jf.options(cmd)
			if err != nil {
				return err
			}
			var names []string
			if classes != "" {
				names = strings.Split(classes, ",")
			}
			chosen, err := redteam.Select(redteam.Classes(), names)
			if err != nil {
				return usageError{err}
			}
			if outDir != "" {
				if err := canWrite(outDir); err != nil {
					return usageError{fmt.Errorf("--out: %w", err)}
				}
			}
			targets, err := redteam.Targets(taskDir, solDir, g.stderr)
			if err != nil {
				return usageError{err}
			}
			canaries, err := redteam.Plant(os.TempDir(), "/dev/shm")
			if err != nil {
				return err
			}
			defer canaries.Remove()
			envSecret := redteam.NewSecret()
			os.Setenv(canaryEnv, envSecret) // before the zygote starts: it must not inherit it
			defer os.Unsetenv(canaryEnv)
			canaries.Secrets = append(canaries.Secrets, envSecret)

			sup, err := g.supervisorFor(cmd.Context(), jf.device)
			if err != nil {
				return err
			}
			defer sup.Close()
			slots := evalSlots(sup)
			ro := redteam.Options{Classes: chosen, Job: jf.fitHost(opts, slots), Concurrency: concurrency,
				SkipGPUOnly: sup.Mode() == eval.TimingCPUInterpreter, Canaries: canaries}
			if ro.Concurrency == 0 {
				ro.Concurrency = slots
			}
			if !asJSON && isTerminal(g.stderr) {
				ro.Progress = func(done, total int) { fmt.Fprintf(g.stderr, "\rredteam: %d of %d evaluated", done, total) }
			}
			report, err := redteam.Run(cmd.Context(), sup, targets, ro)
			if ro.Progress != nil {
				fmt.Fprintln(g.stderr)
			}
			if err != nil {
				return err
			}
			var saveErr error
			if outDir != "" {
				saveErr = redteam.SaveMisses(outDir, &report)
			}
			// The report whatever happened to the misses' files: it is the run's result.
			if asJSON {
				if err := writeJSON(g.stdout, report); err != nil {
					return err
				}
			} else {
				redteam.WriteTable(g.stdout, report)
			}
			if saveErr != nil {
				return saveErr
			}
			return report.Failure()
		},
	}
	cmd.Flags().StringVar(&taskDir, "tasks", "", "suite directory of task files (required)")
	cmd.Flags().StringVar(&solDir, "solutions", "", "directory of honest solutions, named as their tasks (required)")
	cmd.Flags().StringVar(&classes, "classes", "", "comma-separated attack classes (default: all)")
	cmd.Flags().StringVar(&outDir, "out", "", "write each missed variant's source here as TASK/CLASS.py")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "evaluations in flight (default: every zygote slot)")
	cmd.MarkFlagRequired("tasks")
	cmd.MarkFlagRequired("solutions")
	jf.register(cmd)
	return cmd
}
