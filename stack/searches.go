package stack

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// NewRunner is the search runner `search`, `adapt` and `serve` share: the
// LLM client, the skill memory (dataDir/skills.json, its changes logged on
// the bus) and the Manager.
func NewRunner(ctx context.Context, lc llm.Config, dataDir string, b *bus.Bus, ev rollout.Evaluator, gpu string,
	reg runner.Tasks, log *slog.Logger) (*runner.Manager, *skills.Memory, error) {
	client, err := llm.New(lc, log)
	if err != nil {
		return nil, nil, &ConfigError{err}
	}
	mem := skills.New(skills.NewFileStore(filepath.Join(dataDir, "skills.json")), runner.LogCalls(client, b, "", log),
		skills.Config{OnChange: runner.SkillEvents(b, log)}, log)
	if err := mem.Load(ctx); err != nil {
		return nil, nil, err
	}
	mgr, err := runner.NewManager(ctx, runner.Deps{Bus: b, Eval: ev, Skills: mem, Tasks: reg,
		LLM: lc, GPUName: gpu, Log: log})
	return mgr, mem, err
}

// GPUName is the GPU model sup evaluates on, for the search prompts; "" on
// the CPU.
func GPUName(sup *harness.Supervisor) string {
	if d := sup.GPUs().Devices; len(d) > 0 && sup.Mode() != eval.TimingCPUInterpreter {
		return d[0].Name
	}
	return ""
}

// ConfigError is a configuration that cannot work (a task suite that does
// not load, an LLM endpoint that cannot be used): the user's to fix, not a
// failure of the run.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }
