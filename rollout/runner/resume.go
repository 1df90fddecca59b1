package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ResumeAll restarts the searches whose stored state is still "running":
// the process that ran them died or was shut down. Each continues from its
// stored steps (the LLM is not called again for them). It returns the ids
// resumed; a search that cannot be resumed is marked failed and skipped.
func (m *Manager) ResumeAll(ctx context.Context) ([]string, error) {
	ids, err := m.store.ids(ctx)
	if err != nil {
		return nil, err
	}
	var resumed []string
	for _, id := range ids {
		// The record first: an ended search is left as it is, whatever
		// became of its steps in the store.
		rec, ok, err := m.store.record(ctx, id)
		if err != nil || !ok {
			m.log.Error("search not resumable", "search_id", id, "err", err)
			continue
		}
		if rec.Status.State != StateRunning || m.isLive(id) {
			continue
		}
		steps, err := m.store.stepsOf(ctx, rec)
		if err != nil {
			// Its steps are gone (a damaged store): it cannot go on, but it
			// ends, with the steps that remain, rather than stay running.
			m.log.Error("search not resumable", "search_id", id, "err", err)
			m.markFailed(ctx, rec, steps, "resume: "+err.Error())
			continue
		}
		if _, err := m.resume(ctx, rec, steps); err != nil {
			m.log.Error("search not resumed", "search_id", id, "err", err)
			m.markFailed(ctx, rec, steps, "resume: "+err.Error())
			continue
		}
		resumed = append(resumed, id)
	}
	return resumed, nil
}

// Resume continues one search from its stored steps: one still "running"
// (its process died), cancelled or failed. steps 0 keeps its step budget;
// a larger one extends it, and then a search that had spent its budget
// ("done") runs the extra steps too. A smaller one is refused (the steps
// it would drop may be taken already), as is a new budget for a search
// that ran out of tokens or runs here now. A search that ended on its
// budget, or that runs here now, is otherwise returned as it is.
func (m *Manager) Resume(ctx context.Context, id string, steps int) (Status, error) {
	if !validID(id) {
		return Status{}, fmt.Errorf("search %q: %w", id, ErrNotFound)
	}
	if m.isLive(id) {
		st, err := m.Get(ctx, id)
		if err == nil && steps != 0 && steps != st.StepsBudget {
			return Status{}, badRequest("search %s is running here: its budget of %d steps cannot change now", id, st.StepsBudget)
		}
		return st, err
	}
	rec, evs, err := m.store.load(ctx, id)
	if err != nil {
		return Status{}, err
	}
	budget := rec.Status.StepsBudget
	switch {
	case steps != 0 && steps < budget:
		return Status{}, badRequest("search %s has a budget of %d steps (%d taken): steps %d would shrink it; "+
			"give more to extend it, or none to keep it", id, budget, rec.Status.Steps, steps)
	case steps > budget && rec.Status.State == StateBudget:
		return Status{}, badRequest("search %s stopped on its token budget (%d tokens): more steps would not run",
			id, rec.Request.TokenBudget)
	case steps > budget:
		rec.Request.Steps, rec.Status.StepsBudget = steps, steps
	case rec.Status.State == StateDone || rec.Status.State == StateBudget:
		return m.Get(ctx, id)
	}
	return m.resume(ctx, rec, evs)
}

func (m *Manager) resume(ctx context.Context, rec record, steps []Event) (Status, error) {
	p, err := m.resumePlan(ctx, rec)
	if err != nil {
		return Status{}, err
	}
	r := loadedRun(rec, steps)
	r.done, r.hub = make(chan struct{}), hub{last: r.seq}
	r.st.State, r.st.Error, r.st.UpdatedAt = StateRunning, "", time.Now().UTC()
	r.st.StepsBudget = p.cfg.Steps
	// Steps stored after the record's last update may never have reached
	// the bus: publish them again (their event ids make that idempotent).
	for _, ev := range steps {
		if ev.Seq > rec.Seq {
			m.publishStep(ctx, p.cfg, ev)
		}
	}
	if err := m.store.put(ctx, r.record()); err != nil {
		return Status{}, err
	}
	if err := m.launch(r, p, steps); err != nil {
		return Status{}, err
	}
	return r.status(), nil
}

// resumePlan plans a stored search again, on the task source it ran on: a
// search by task id keeps it in its record, so that a resume needs no
// registry (the CLI's holds no suite on --resume) and never runs on a task
// file changed since. Records without one resolve their id as Start did.
func (m *Manager) resumePlan(ctx context.Context, rec record) (plan, error) {
	req := rec.Request
	if req.Reference == "" && rec.TaskSource != "" {
		req.TaskID, req.Reference = "", rec.TaskSource
	}
	p, err := m.plan(ctx, req)
	if err == nil {
		p.cfg.TaskID = rec.Status.TaskID
	}
	return p, err
}

func (m *Manager) isLive(id string) bool {
	m.mu.Lock()
	r, ok := m.runs[id]
	m.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// markFailed stores a search that cannot be resumed as failed, so that it
// is not retried at every start.
func (m *Manager) markFailed(ctx context.Context, rec record, steps []Event, reason string) {
	r := loadedRun(rec, steps)
	r.fail(reason)
	if err := m.store.put(ctx, r.record()); err != nil && !errors.Is(err, context.Canceled) {
		m.log.Warn("search record not updated", "search_id", rec.Status.SearchID, "err", err)
	}
	m.mu.Lock()
	m.runs[rec.Status.SearchID] = r
	m.mu.Unlock()
}
