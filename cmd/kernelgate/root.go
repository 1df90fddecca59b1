package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/stack"
)

// Exit codes: 0 whenever an evaluation happened (whatever its status).
const (
	exitOK      = 0
	exitFailed  = 1 // the evaluation itself could not run
	exitUsage   = 2
	exitAborted = 130
)

// usageError marks bad flags or arguments (exit 2).
type usageError struct{ error }

// configError is err as a usage error when the configuration was at fault
// (stack.ConfigError: a task suite that does not load, an unusable LLM
// endpoint).
func configError(err error) error {
	if _, ok := errors.AsType[*stack.ConfigError](err); ok {
		return usageError{err}
	}
	return err
}

// globals are the flags every subcommand shares.
type globals struct {
	logLevel string
	python   string
	stdout   io.Writer
	stderr   io.Writer
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "kernelgate",
		Short:         "Evaluate LLM-written Triton kernels against PyTorch reference tasks",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	root.PersistentFlags().StringVar(&g.python, "python", "", "Python interpreter with torch and triton (overrides $"+harness.EnvPython+")")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newEvalCmd(g), newBenchCmd(g), newDoctorCmd(g), newServeCmd(g), newWorkerCmd(g), newKeysCmd(g), newTasksCmd(g), newExportCmd(g), newCompactCmd(g), newSearchCmd(g), newAdaptCmd(g), newTopCmd(g), newRedteamCmd(g), newVersionCmd(g))
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "kernelgate: interrupted")
		return exitAborted
	}
	fmt.Fprintf(stderr, "kernelgate: %s\n", oneLine(err.Error()))
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") ||
		strings.HasPrefix(err.Error(), "required flag") || strings.HasPrefix(err.Error(), "requires ") ||
		strings.HasPrefix(err.Error(), "accepts ") {
		return exitUsage
	}
	return exitFailed
}

func (g *globals) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)}
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level})), nil
}

// config is the harness config: defaults, then KERNELGATE_* variables,
// then flags.
func (g *globals) config(device string) (harness.Config, error) {
	var cfg harness.Config
	if err := cfg.ApplyEnv(os.Getenv); err != nil {
		return cfg, err
	}
	if g.python != "" {
		cfg.Python = g.python
	}
	if device != "" {
		cfg.Device = device
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// startSupervisor builds and starts a Supervisor; the caller closes it.
func (g *globals) startSupervisor(ctx context.Context, cfg harness.Config) (*harness.Supervisor, error) {
	log, err := g.logger()
	if err != nil {
		return nil, err
	}
	sup := harness.New(cfg, log)
	if err := sup.Start(ctx); err != nil {
		return nil, fmt.Errorf("zygote failed to start: %w", err)
	}
	return sup, nil
}

// supervisorFor is config + startSupervisor for commands that evaluate on one device choice.
func (g *globals) supervisorFor(ctx context.Context, device string) (*harness.Supervisor, error) {
	cfg, err := g.config(device)
	if err != nil {
		return nil, err
	}
	return g.startSupervisor(ctx, cfg)
}

// oneLine keeps the stderr reason to one line; details are in the logs.
func oneLine(s string) string {
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimSpace(rest) != "" {
		// Start errors carry the zygote's last output after a newline; its
		// last line (the exception) is the part worth showing.
		lines := strings.Split(strings.TrimSpace(rest), "\n")
		return first + " " + strings.TrimSpace(lines[len(lines)-1])
	}
	return first
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
