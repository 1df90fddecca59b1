package main

import "github.com/spf13/cobra"

// newTasksCmd groups the task-suite tools: list, show, check, synth.
func newTasksCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "tasks",
		Short: "List, show, check and generate task suites (KernelBench-format .py files)",
	}
	c.AddCommand(tasksSubcommands(g)...)
	return c
}

// tasksSubcommands is one line per subcommand, so each lives in its own file.
func tasksSubcommands(g *globals) []*cobra.Command {
	return []*cobra.Command{newTasksListCmd(g), newTasksShowCmd(g), newTasksCheckCmd(g), newTasksSynthCmd(g)}
}
