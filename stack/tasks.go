package stack

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/tasks"
)

// openTasks builds the task registry of serve: the suites in dirs (none
// given: tasks.DefaultDirs from the working directory and the binary), and
// the API tasks kept in the bus.
func openTasks(ctx context.Context, b *bus.Bus, dirs []string, log *slog.Logger) (*tasks.Registry, error) {
	if len(dirs) == 0 {
		wd, _ := os.Getwd()
		exe, _ := os.Executable()
		dirs = tasks.DefaultDirs(wd, exe)
		if len(dirs) == 0 {
			log.Warn("no task suites found (no datasets/ next to the working directory or the binary); use --tasks DIR")
		}
	}
	suite, err := tasks.LoadSuites(dirs)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if err := tasks.WithFigures(suite, dirs); err != nil {
		log.Warn("task figures not shown (GET /v1/tasks, the dashboard's tasks page)", "err", err)
	}
	store, err := tasks.OpenBusStore(ctx, b)
	if err != nil {
		return nil, err
	}
	reg, err := tasks.NewRegistry(suite, store)
	if err != nil {
		return nil, &ConfigError{err}
	}
	log.Info("task suites loaded", "dirs", fmt.Sprint(dirs), "tasks", len(suite))
	return reg, nil
}
