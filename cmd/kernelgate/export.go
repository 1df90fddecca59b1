package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/export/dataset"
)

func newExportCmd(g *globals) *cobra.Command {
	var (
		req            dataset.Request
		out, dataDir   string
		taskDirs       []string
		force          bool
		minSpeedup, tf float64
		minMargin      float64
		topK, maxPairs int
	)
	cmd := &cobra.Command{
		Use:   "export --format verl|sft|dpo|skills|arrow|trajectories|search-trees --out DIR [filters]",
		Short: "Write a training-data export (verl, SFT, DPO, skills, Arrow, trajectories, search trees) from the Parquet log and task suites",
		Long: "Reads the gateway's log under --data (read-only; parts being written are skipped) and, for verl\n" +
			"and for rows logged without their task source, the task suites (--tasks). Writes --out with\n" +
			"manifest.json. Filters: --since/--until (RFC3339 or YYYY-MM-DD, on the row's ts; a bare --until\n" +
			"date is that whole day), --task (id or glob, repeatable), --status (repeatable), --min-speedup.\n" +
			"Evaluations the API answered valid=false are left out (skipped.invalid) unless --include-invalid.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			setIf := func(name string, set func()) {
				if fl.Changed(name) {
					set()
				}
			}
			setIf("min-speedup", func() { req.MinSpeedup = &minSpeedup })
			setIf("test-fraction", func() { req.TestFraction = &tf })
			setIf("top-k", func() { req.TopK = &topK })
			setIf("min-margin", func() { req.MinMargin = &minMargin })
			setIf("max-pairs-per-task", func() { req.MaxPairsPerTask = &maxPairs })
			spec, err := req.Parse()
			if err != nil {
				return usageError{fmt.Errorf("--%s", flagMessage(err))}
			}
			if out == "" {
				return usageError{errors.New("--out DIR is required")}
			}
			var leftOut []string
			if len(taskDirs) == 0 {
				wd, _ := os.Getwd()
				exe, _ := os.Executable()
				taskDirs, leftOut = dataset.DefaultSuites(wd, exe)
			}
			ts, files, err := dataset.LoadSuites(taskDirs)
			if err != nil {
				return usageError{err}
			}
			log, err := g.logger()
			if err != nil {
				return err
			}
			src := dataset.Source{DataDir: dataDir, Tasks: ts, TaskFiles: files, Version: version, Log: log, SuitesLeftOut: leftOut}
			m, err := dataset.Write(cmd.Context(), spec, src, out, force)
			var ie *dataset.InputError
			if errors.As(err, &ie) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if len(m.SuitesLeftOut) > 0 {
				fmt.Fprintf(g.stderr, "kernelgate export: left out suite(s) %s, not among the defaults (%s); --tasks names the suites to read\n",
					strings.Join(m.SuitesLeftOut, ", "), strings.Join(dataset.DefaultSuiteNames, ", "))
			}
			if m.Rows == 0 {
				fmt.Fprintf(g.stderr, "kernelgate export: 0 rows matched; wrote an empty %s dataset to %s\n", m.Format, out)
			}
			fmt.Fprintln(g.stdout, exportSummary(m, out))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Format, "format", "", "verl, sft, dpo, skills, arrow, trajectories or search-trees (required)")
	fl.StringVar(&out, "out", "", "output directory: created; an existing one must be empty (required)")
	fl.BoolVar(&force, "force", false, "replace --out when it holds an earlier export")
	fl.StringVar(&dataDir, "data", "./data", "the gateway's data directory (the one given to serve)")
	fl.StringSliceVar(&taskDirs, "tasks", nil, "task suite directories, repeatable (default: datasets/{ci,level1,level2,level3} that exist next to the working dir or the binary)")
	fl.StringVar(&req.Since, "since", "", "rows at or after this time (RFC3339 or YYYY-MM-DD)")
	fl.StringVar(&req.Until, "until", "", "rows before this time (RFC3339), or up to the end of this day (YYYY-MM-DD)")
	fl.StringArrayVar(&req.Task, "task", nil, "task id or glob such as level2/* (repeatable)")
	fl.StringArrayVar(&req.Status, "status", nil, "verdict status (evaluations, episode and search steps), or a skill's active|retired (skills), repeatable; arrow: each filters the tables of its kind, the manifest's filters_applied says which")
	fl.Float64Var(&minSpeedup, "min-speedup", 0, "rows with a speedup of at least this")
	fl.BoolVar(&req.IncludeInvalid, "include-invalid", false, "keep evaluations the API answered valid=false (a deadline stop, a broken reference); by default they are left out and counted in the manifest's skipped")
	fl.Float64Var(&tf, "test-fraction", dataset.DefaultTestFraction, "verl: fraction of tasks in test.parquet (split by task id hash)")
	fl.IntVar(&topK, "top-k", dataset.DefaultTopK, "sft: correct kernels per task (distinct code)")
	fl.Float64Var(&minMargin, "min-margin", dataset.DefaultMinMargin, "dpo: a correct kernel is rejected when chosen.speedup >= (1+margin) x its speedup")
	fl.IntVar(&maxPairs, "max-pairs-per-task", dataset.DefaultMaxPairsPerTask, "dpo: pairs per task at most")
	return cmd
}

// flagMessage names the flag of an input error ("since" → "since ...").
func flagMessage(err error) string {
	var ie *dataset.InputError
	if errors.As(err, &ie) && ie.Field != "" {
		return strings.ReplaceAll(ie.Field, "_", "-") + ": " + ie.Msg
	}
	return err.Error()
}

// exportSummary is the one stdout line: where, and rows per file.
func exportSummary(m *dataset.Manifest, out string) string {
	var parts []string
	for _, name := range sortedKeys(m.Files) {
		parts = append(parts, fmt.Sprintf("%s %d", name, m.Files[name]))
	}
	return fmt.Sprintf("%s: %s export, %d rows (%s)", out, m.Format, m.Rows, strings.Join(parts, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
