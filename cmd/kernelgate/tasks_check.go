package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/tasks/check"
)

func newTasksCheckCmd(g *globals) *cobra.Command {
	var (
		jf                jobFlags
		depth, manifest   string
		solutions, asJSON bool
		concurrency       int
		maxMB             float64
	)
	cmd := &cobra.Command{
		Use:   "check DIR...",
		Short: "Validate task suites: each task loads, runs, is deterministic, not degenerate and fits memory",
		Long: `Runs every task of the suites in DIR (a suite directory, or a root such as datasets/
whose subdirectories are suites) through the harness's sandboxed task check, and each
task's solution (solutions/<suite>/<file>) through a normal evaluation. A task is
rejected, with the reason, when its reference fails, is nondeterministic, degenerate
(near-constant output, or one that does not depend on the seed) or needs too much
memory, or when its solution is not judged correct.

--depth auto runs for real what the device can afford: every task on a GPU (where the
reference is also timed); on a CPU only small tasks, the others at shape level (one
forward call on torch's meta device); a solution of a task checked at shape level is not
run. The exit status is 1 when any task is rejected.

A task may need at most 4096 MiB of inputs, parameters and outputs for one call, unless
its suite declares another limit in suite.json ({"max_mb": 16384} in datasets/heavy);
--max-mb replaces both for every suite.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := jf.options(cmd)
			if err != nil {
				return err
			}
			if depth != "auto" && depth != "full" && depth != "shapes" {
				return usageError{fmt.Errorf("--depth %q: want auto, full or shapes", depth)}
			}
			if maxMB < 0 {
				return usageError{fmt.Errorf("--max-mb %g: want a positive limit, or 0 for the suites' own", maxMB)}
			}
			if manifest != "" {
				if err := manifestWritable(manifest); err != nil {
					return usageError{fmt.Errorf("--manifest: %w", err)}
				}
			}
			var suites []datasets.Suite
			for _, a := range args {
				s, err := datasets.Suites(a)
				if err != nil {
					return usageError{err}
				}
				suites = append(suites, s...)
			}
			sup, err := g.supervisorFor(cmd.Context(), jf.device)
			if err != nil {
				return err
			}
			defer sup.Close()
			co := check.Options{Depth: depth, Job: opts, Concurrency: concurrency, Solutions: solutions, MaxMB: maxMB}
			if co.Concurrency == 0 {
				for _, z := range sup.Stats() {
					co.Concurrency += z.Concurrency
				}
			}
			if !asJSON && isTerminal(g.stderr) {
				co.Progress = g.stderr
			}
			results, err := check.Run(cmd.Context(), sup, check.Targets(suites), co)
			if err != nil {
				return err
			}
			// The results first: they are the run's, whatever happens to the manifest.
			if asJSON {
				if err := writeJSON(g.stdout, results); err != nil {
					return err
				}
			} else {
				writeCheckTable(g.stdout, results)
			}
			if manifest != "" {
				if err := writeManifest(manifest, results); err != nil {
					return fmt.Errorf("manifest: %w", err)
				}
			}
			if n := rejected(results); n > 0 {
				return fmt.Errorf("%d of %d tasks rejected", n, len(results))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&depth, "depth", "auto", "auto, full (run every reference) or shapes (meta device only)")
	cmd.Flags().BoolVar(&solutions, "solutions", true, "also evaluate each task's solution from solutions/<suite>/")
	cmd.Flags().StringVar(&manifest, "manifest", "", "merge the valid tasks into this manifest file (e.g. datasets/manifest.json)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	cmd.Flags().IntVar(&concurrency, "concurrency", 0, "checks in flight (default: every zygote slot)")
	cmd.Flags().Float64Var(&maxMB, "max-mb", 0, "the most MiB of inputs, parameters and outputs a task may need for one call, for every suite (default: the suite's suite.json, else 4096)")
	jf.register(cmd)
	return cmd
}

func rejected(results []check.Result) int {
	n := 0
	for _, r := range results {
		if !r.OK() {
			n++
		}
	}
	return n
}

// manifestWritable says why writeManifest would fail at path before a check
// runs: a manifest that does not read, or a folder where no file can be made.
func manifestWritable(path string) error {
	if _, err := datasets.ReadManifest(path); err != nil {
		return err
	}
	return canWrite(filepath.Dir(path))
}

// writeManifest merges the valid tasks into path and drops the rejected ones.
func writeManifest(path string, results []check.Result) error {
	m, err := datasets.ReadManifest(path)
	if err != nil {
		return err
	}
	var entries []datasets.Entry
	var drop []string
	now := time.Now()
	for _, r := range results {
		if r.OK() {
			entries = append(entries, check.Entry(r, now))
		} else {
			drop = append(drop, r.ID)
		}
	}
	m.Remove(drop)
	m.Merge(entries)
	return m.Write(path)
}

func writeCheckTable(w io.Writer, results []check.Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tCHECK\tDTYPE\tGFLOP\tMB\tREF ms\tSOLUTION\tRESULT")
	var full, shapes, solOK, solRun, solSkipped int
	for _, r := range results {
		e := check.Entry(r, time.Time{})
		ref := "-"
		if e.GPU != nil {
			ref = fmt.Sprintf("%.3f", e.GPU.RefMS)
		}
		sol := "-"
		switch {
		case r.Solution != nil && r.Solution.Speedup != nil:
			sol = fmt.Sprintf("%s %.2fx", r.Solution.Status, *r.Solution.Speedup)
		case r.Solution != nil:
			sol = string(r.Solution.Status)
		case r.SolutionNote != "":
			sol = "not run"
			solSkipped++
		}
		if r.Solution != nil {
			solRun++
			if r.Solution.Status == "correct" {
				solOK++
			}
		}
		result := "ok"
		if !r.OK() {
			result = "REJECTED: " + strings.Join(r.Problems, "; ")
		} else if len(r.Warnings) > 0 {
			result = "ok (warning: " + strings.Join(r.Warnings, "; ") + ")"
		}
		switch e.Checked {
		case "full":
			full++
		case "shapes":
			shapes++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, dash(e.Checked), dash(e.DType),
			optNum(e.GFLOP, "%.1f"), optNum(e.MB, "%.1f"), ref, sol, result)
	}
	tw.Flush()
	n := rejected(results)
	fmt.Fprintf(w, "\n%d tasks: %d valid (%d run in full, %d at shape level only), %d rejected; solutions: %d of %d run correct",
		len(results), len(results)-n, full, shapes, n, solOK, solRun)
	if solSkipped > 0 {
		fmt.Fprintf(w, ", %d not run (their tasks were checked at shape level only: too large for this device)", solSkipped)
	}
	fmt.Fprintln(w)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func optNum(p *float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p)
}
