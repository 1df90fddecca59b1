package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/tasks"
)

// suitesFrom loads the suites under each path, or the project's own
// (datasets/ next to the working directory or the binary) when none is given.
func suitesFrom(paths []string) ([]datasets.Suite, error) {
	if len(paths) == 0 {
		wd, _ := os.Getwd()
		exe, _ := os.Executable()
		paths = tasks.DefaultDirs(wd, exe)
		if len(paths) == 0 {
			return nil, usageError{fmt.Errorf("no datasets/ next to the working directory or the binary; give a DIR")}
		}
	}
	var out []datasets.Suite
	for _, p := range paths {
		s, err := datasets.Suites(p)
		if err != nil {
			return nil, usageError{err}
		}
		out = append(out, s...)
	}
	return out, nil
}

// manifestFor reads the manifest.json next to a suite's directory, if any.
func manifestFor(s datasets.Suite) datasets.Manifest {
	m, err := datasets.ReadManifest(filepath.Join(filepath.Dir(s.Dir), "manifest.json"))
	if err != nil {
		return datasets.Manifest{}
	}
	return m
}

func newTasksListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [DIR...]",
		Short: "List the tasks of suites (default: the project's datasets/) with their manifest figures",
		RunE: func(cmd *cobra.Command, args []string) error {
			suites, err := suitesFrom(args)
			if err != nil {
				return err
			}
			var rows []datasets.Entry
			for _, s := range suites {
				m := manifestFor(s)
				for _, t := range s.Tasks {
					rows = append(rows, describe(s, t, m))
				}
			}
			if asJSON {
				return writeJSON(g.stdout, rows)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLEVEL\tDTYPE\tREF ms\tSOLUTION\tTAGS\tNAME")
			for _, e := range rows {
				ref, sol := "-", "-"
				if e.GPU != nil {
					ref = fmt.Sprintf("%.3f", e.GPU.RefMS)
					if e.GPU.SolutionSpeedup != nil {
						sol = fmt.Sprintf("%.2fx", *e.GPU.SolutionSpeedup)
					}
				}
				if sol == "-" && e.Solution != "" {
					sol = "yes"
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Level, dash(e.DType), ref, sol,
					strings.Join(e.Tags, ","), e.Name)
			}
			tw.Flush()
			fmt.Fprintf(g.stdout, "\n%d tasks in %d suites\n", len(rows), len(suites))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON")
	return cmd
}

// describe is the manifest's entry for t when it has one, else what the
// file declares (name, tags) and where its solution is.
func describe(s datasets.Suite, t datasets.Task, m datasets.Manifest) datasets.Entry {
	id := s.Name + "/" + t.Name
	if e, ok := m.Find(id); ok {
		return e
	}
	name, tags := datasets.Declared(t.Source)
	e := datasets.Entry{ID: id, Name: name, Level: s.Level, Tags: tags}
	if p := s.Solution(t); p != "" {
		e.Solution, _ = filepath.Rel(filepath.Dir(s.Dir), p)
	}
	return e
}

func newTasksShowCmd(g *globals) *cobra.Command {
	var (
		dirs   []string
		prompt bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one task (e.g. level2/5_gemm_layernorm): its manifest entry and source, or its LLM prompt",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suites, err := suitesFrom(dirs)
			if err != nil {
				return err
			}
			for _, s := range suites {
				for _, t := range s.Tasks {
					if s.Name+"/"+t.Name != args[0] {
						continue
					}
					if prompt {
						_, err := fmt.Fprint(g.stdout, tasks.Prompt(t.Source))
						return err
					}
					b, _ := json.MarshalIndent(describe(s, t, manifestFor(s)), "", "  ")
					fmt.Fprintf(g.stdout, "%s\n\n# %s\n%s", b, t.Path, t.Source)
					return nil
				}
			}
			return usageError{fmt.Errorf("no task %q in %d suites (ids are <suite>/<file stem>; see `kernelgate tasks list`)", args[0], len(suites))}
		},
	}
	cmd.Flags().StringArrayVar(&dirs, "tasks", nil, "suite directory or root (default: the project's datasets/)")
	cmd.Flags().BoolVar(&prompt, "prompt", false, "print the prompt an LLM gets for this task instead")
	return cmd
}
