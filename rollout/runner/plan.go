package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/tasks"
)

// MaxSteps bounds a request's step budget: a search is a log of its steps,
// and a typo of 1e6 should be refused, not run for a week.
const MaxSteps = 10000

// plan is a validated request: the engine's config (without the search id)
// and the LLM client's config.
type plan struct {
	cfg rollout.Config
	llm llm.Config
}

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// plan checks req and resolves its task; every refusal wraps ErrBadRequest
// with the reason.
func (m *Manager) plan(ctx context.Context, req Request) (plan, error) {
	cfg := rollout.DefaultConfig()
	if req.Policy != "" {
		cfg.Policy = req.Policy
	}
	switch cfg.Policy {
	case rollout.PolicyAdaExplore, rollout.PolicyRefine, rollout.PolicySample:
	default:
		return plan{}, badRequest("policy must be adaexplore, refine or sample, got %q", req.Policy)
	}
	if req.Steps < 1 || req.Steps > MaxSteps {
		return plan{}, badRequest("steps must be in 1..%d, got %d", MaxSteps, req.Steps)
	}
	if req.TokenBudget < 0 {
		return plan{}, badRequest("token_budget must be >= 0, got %d", req.TokenBudget)
	}
	cfg.Steps, cfg.TokenBudget, cfg.Seed, cfg.GPUName = req.Steps, req.TokenBudget, req.Seed, m.deps.GPUName
	if req.Options != nil {
		cfg.Options = *req.Options
	}
	if err := m.resolveTask(ctx, req, &cfg); err != nil {
		return plan{}, err
	}
	lc := mergeLLM(m.deps.LLM, req.LLM)
	if lc.BaseURL == "" {
		return plan{}, badRequest("no LLM endpoint: give llm.base_url (the server has no default)")
	}
	if err := lc.Validate(); err != nil {
		return plan{}, badRequest("%v", err)
	}
	cfg.SearchID = "s_check" // Validate wants one; Start sets the real one
	if err := cfg.Validate(); err != nil {
		return plan{}, badRequest("%v", err)
	}
	return plan{cfg: cfg, llm: lc}, nil
}

func (m *Manager) resolveTask(ctx context.Context, req Request, cfg *rollout.Config) error {
	switch {
	case req.TaskID == "" && req.Reference == "":
		return badRequest("give task_id or reference")
	case req.TaskID != "" && req.Reference != "":
		return badRequest("give task_id or reference, not both")
	case req.Reference != "":
		if len(req.Reference) > tasks.MaxSourceBytes {
			return badRequest("reference is %d bytes; at most %d", len(req.Reference), tasks.MaxSourceBytes)
		}
		cfg.TaskID, cfg.TaskSource = tasks.DefaultID(eval.HashSource(req.Reference)), req.Reference
		return nil
	}
	t, err := m.deps.Tasks.Get(ctx, req.TaskID)
	if errors.Is(err, tasks.ErrNotFound) {
		return fmt.Errorf("%w %q (GET /v1/tasks lists them)", ErrTaskNotFound, req.TaskID)
	}
	if err != nil {
		return fmt.Errorf("runner: task %s: %w", req.TaskID, err)
	}
	cfg.TaskID, cfg.TaskSource = t.ID, t.Source
	return nil
}

// mergeLLM overrides def's endpoint settings with the request's non-empty ones.
func mergeLLM(def llm.Config, s LLMSettings) llm.Config {
	if s.BaseURL != "" {
		def.BaseURL = s.BaseURL
	}
	if s.Model != "" {
		def.Model = s.Model
	}
	if s.APIKey != "" {
		def.APIKey = s.APIKey
	}
	if s.Temperature != nil {
		t := *s.Temperature
		def.Temperature = &t
	}
	if s.MaxTokens > 0 {
		def.MaxTokens = s.MaxTokens
	}
	return def
}
