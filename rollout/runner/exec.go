package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
)

// writeTimeout bounds one store or bus write of a step: the bus is local
// or near, and a stuck write must not stall the search forever.
const writeTimeout = 30 * time.Second

// launch registers r and runs its search in a goroutine; resume holds the
// steps of an earlier run (in Seq order).
func (m *Manager) launch(r *run, p plan, resume []Event) error {
	client, err := llm.New(p.llm, m.deps.Log)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	cfg := p.cfg
	cfg.SearchID = r.st.SearchID
	for _, ev := range resume {
		cfg.Resume = append(cfg.Resume, ev.Step)
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return errors.New("runner: shutting down")
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.cfg, r.model = cancel, cfg, p.llm.Model
	m.runs[cfg.SearchID] = r
	m.wg.Add(1)
	m.mu.Unlock()

	deps := rollout.Deps{LLM: logSearchCalls(client, m.deps.Bus, r, m.deps.Log), Eval: m.deps.Eval, Skills: m.deps.Skills, Extract: llm.Extractor{},
		Log: m.deps.Log, OnStep: func(s rollout.Step) { m.onStep(ctx, r, cfg, s) }}
	wctx, wcancel := context.WithTimeout(context.Background(), writeTimeout)
	m.publishSearch(wctx, r)
	wcancel()
	go func() {
		defer m.wg.Done()
		defer cancel()
		res, err := rollout.Run(ctx, cfg, deps)
		m.end(r, res, err)
	}()
	m.log.Info("search started", "search_id", cfg.SearchID, "task_id", cfg.TaskID, "policy", cfg.Policy,
		"steps", cfg.Steps, "resumed_steps", len(resume), "model", p.llm.Model)
	return nil
}

// onStep numbers a step, stores it (for resume and replay), logs it on the
// bus (search_steps, and evaluations for the kernel it evaluated), updates
// the status and fans it out.
func (m *Manager) onStep(ctx context.Context, r *run, cfg rollout.Config, s rollout.Step) {
	r.mu.Lock()
	seq := r.seq + 1
	r.mu.Unlock()
	ev := Event{Seq: seq, Step: clip(s)}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := m.store.putStep(wctx, ev); err != nil {
		m.log.Error("step not stored (a resume would redo it)", "search_id", s.SearchID, "seq", seq, "err", err)
	}
	m.publishStep(wctx, cfg, ev)
	r.apply(ev)
	if err := m.store.put(wctx, r.record()); err != nil {
		m.log.Warn("search record not updated", "search_id", s.SearchID, "seq", seq, "err", err)
	}
	r.hub.publish(ev)
}

// publishStep logs a step on events.search_step, and the kernel it
// evaluated on events.evaluation under the step's eval_id, so that
// search_steps.eval_id joins evaluations like any other evaluation. The ids
// make a second publish of the same step (after a restart) one row each.
func (m *Manager) publishStep(ctx context.Context, cfg rollout.Config, ev Event) {
	s := ev.Step
	m.publishEvaluation(ctx, cfg, s)
	out := event.SearchStep{
		EventID: event.SearchStepID(s.SearchID, ev.Seq), Time: s.Time, SearchID: s.SearchID, Seq: ev.Seq,
		TaskID: cfg.TaskID, Node: s.Node, Parent: s.Parent, Action: s.Action, Policy: s.Policy,
		PromptVersion: s.PromptVersion, Completion: s.Completion, Code: s.Code,
		TokensIn: s.TokensIn, TokensOut: s.TokensOut, LatencyMS: s.LatencyMS, EvalMS: s.EvalMS, StepMS: s.StepMS, Model: s.Model,
		EvalID: s.EvalID, Verdict: s.Verdict, Reward: s.Reward, BestSpeedup: s.BestSpeedup,
		BestNode: s.BestNode, SkillIDs: s.SkillIDs, SkillVersions: s.SkillVersions, CallIDs: s.CallIDs,
		Duplicate: s.Duplicate, Error: s.Error, Failure: s.Failure,
	}
	for _, msg := range s.Prompt {
		out.Prompt = append(out.Prompt, event.PromptMessage{Role: msg.Role, Content: msg.Content})
	}
	if err := event.Publish(ctx, m.deps.Bus, out); err != nil {
		m.log.Error("search step not logged", "search_id", s.SearchID, "seq", ev.Seq, "err", err)
	}
}

// publishEvaluation logs the evaluation a step made (none when the step
// failed before evaluating): batch_id is the search, reward_fn AdaExplore's.
func (m *Manager) publishEvaluation(ctx context.Context, cfg rollout.Config, s rollout.Step) {
	if s.EvalID == "" || s.Verdict == nil {
		return
	}
	reward, exec, opts := s.Reward, s.EvalMS, cfg.Options
	out := event.Evaluation{
		EventID: s.EvalID, Time: s.Time, EvalID: s.EvalID, BatchID: s.SearchID,
		TaskID: cfg.TaskID, TaskSource: cfg.TaskSource, Code: s.Code, RewardFn: "adaexplore",
		Reward: &reward, Options: &opts, Verdict: *s.Verdict, Cached: s.Cached, SourceEvalID: s.SourceEvalID,
	}
	if !s.Cached { // a cached answer ran nothing
		out.ExecMS = &exec
	}
	if s.Completion != "" {
		completion := s.Completion
		out.Completion = &completion
	}
	for _, msg := range s.Prompt {
		out.Prompt = append(out.Prompt, event.PromptMessage{Role: msg.Role, Content: msg.Content})
	}
	if err := event.Publish(ctx, m.deps.Bus, out); err != nil {
		m.log.Error("search evaluation not logged", "search_id", s.SearchID, "eval_id", s.EvalID, "err", err)
	}
}

// publishSearch logs where search r stands on events.search (the searches
// table): its configuration, seed, budget, state and best node. One row per
// state and step count, so a repeat (a restart) is one row.
func (m *Manager) publishSearch(ctx context.Context, r *run) {
	st, cfg := r.status(), r.cfg
	out := event.Search{
		EventID: fmt.Sprintf("%s.%s.%d", st.SearchID, st.State, st.Steps), Time: time.Now().UTC(),
		SearchID: st.SearchID, TaskID: st.TaskID, State: st.State, Error: st.Error, Policy: cfg.Policy,
		Model: r.model, Seed: cfg.Seed, StepsBudget: cfg.Steps, TokenBudget: cfg.TokenBudget, C: cfg.C,
		ExpandRatio: cfg.ExpandRatio, Alpha: cfg.Alpha, PLarge: cfg.PLarge, SmallStepLimit: cfg.SmallStepLimit,
		Pool: cfg.Pool, ContextRounds: cfg.ContextRounds, SkillK: cfg.SkillK, SkillOmitRate: cfg.SkillOmitRate,
		Options: cfg.Options, Steps: st.Steps, TokensIn: st.TokensIn, TokensOut: st.TokensOut, CreatedAt: st.CreatedAt,
	}
	if b := st.Best; b != nil {
		node, reward := b.Node, b.Reward
		out.BestNode, out.BestReward = &node, &reward
		out.BestEvalID = fmt.Sprintf("%s-%d", st.SearchID, b.Node) // rollout's eval id of a node
		if b.Verdict != nil {
			out.BestSpeedup = b.Verdict.Speedup
		}
	}
	if err := event.Publish(ctx, m.deps.Bus, out); err != nil {
		m.log.Error("search state not logged", "search_id", st.SearchID, "state", st.State, "err", err)
	}
}

// end records how the search ended. A search stopped by Close (shutdown)
// is left "running" in the store, for ResumeAll.
func (m *Manager) end(r *run, res rollout.Result, err error) {
	defer close(r.done)
	defer r.hub.end()
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	switch {
	case err != nil:
		r.fail(err.Error())
	case res.Status == rollout.StatusCancelled && closing && !r.userStop.Load():
		m.log.Info("search interrupted by shutdown; resumable", "search_id", r.st.SearchID)
		return
	default:
		r.finish(res, r.failReason(res.Status))
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	stored := true
	if err := m.store.put(ctx, r.record()); err != nil {
		m.log.Error("final search record not stored", "search_id", r.st.SearchID, "err", err)
		stored = false // this run is then the only place its end is known
	}
	m.publishSearch(ctx, r)
	st := r.status()
	m.log.Info("search ended", "search_id", st.SearchID, "state", st.State, "steps", st.Steps,
		"tokens_in", st.TokensIn, "tokens_out", st.TokensOut, "error", st.Error)
	if stored {
		m.forget(r)
	}
}

// forget drops an ended run from memory: from now on it is read from the
// store, so a gateway's memory holds its live searches only, not every
// search it ever ran.
func (m *Manager) forget(r *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.st.SearchID] == r {
		delete(m.runs, r.st.SearchID)
	}
}
