package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/rollout/skills"
	"github.com/kernelgate/kernelgate/tasks"
)

// openSearches wires /v1/searches and /v1/skills when serve has an LLM
// endpoint (--llm-url); without one it returns nil and those endpoints
// answer 503. Searches that were running when the process stopped resume.
func openSearches(ctx context.Context, lf *llmFlags, dataDir string, b *bus.Bus, sup *harness.Supervisor,
	reg *tasks.Registry, d *gateway.Deps, log *slog.Logger) (*runner.Manager, error) {
	if lf.url == "" {
		log.Info("searches off: no --llm-url")
		return nil, nil
	}
	lc, err := lf.config()
	if err != nil {
		return nil, err
	}
	client, err := llm.New(lc, log)
	if err != nil {
		return nil, usageError{err}
	}
	mem := skills.New(skills.NewFileStore(filepath.Join(dataDir, "skills.json")), client,
		skills.Config{OnChange: runner.SkillEvents(b, log)}, log)
	if err := mem.Load(ctx); err != nil {
		return nil, err
	}
	mgr, err := runner.NewManager(ctx, runner.Deps{Bus: b, Eval: sup, Skills: mem, Tasks: reg,
		LLM: lc, GPUName: gpuName(sup), Log: log})
	if err != nil {
		return nil, err
	}
	// Assigned only here: a nil *Manager in the interface would not read as
	// "not configured".
	d.Searches, d.Skills = mgr, mem
	ids, err := mgr.ResumeAll(ctx)
	if err != nil {
		log.Warn("resuming searches failed", "err", err)
	} else if len(ids) > 0 {
		log.Info("searches resumed", "ids", ids)
	}
	return mgr, nil
}
