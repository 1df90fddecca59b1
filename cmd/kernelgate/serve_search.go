package main

import (
	"context"
	"log/slog"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/tasks"
)

// openSearches wires /v1/searches and /v1/skills when serve has an LLM
// endpoint (--llm-url); without one it returns nil and those endpoints
// answer 503. Searches that were running when the process stopped resume.
// Their evaluations go through the job queue (dispatch.Service.Evaluate), ahead of bulk
// batches, to this process's workers or, with --workers 0 (sup nil), to
// those on other hosts.
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
	gpu := ""
	if sup != nil {
		gpu = gpuName(sup)
	} else if envs := d.Envs; envs != nil && len(envs()) > 0 {
		gpu = envs()[0].GPU // a worker already announced; else the prompts name no GPU
	}
	mgr, mem, err := newRunner(ctx, lc, dataDir, b, d.Evals, gpu, reg, log)
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
