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
		rec, steps, err := m.store.load(ctx, id)
		if err != nil {
			m.log.Error("search not resumable", "search_id", id, "err", err)
			continue
		}
		if rec.Status.State != StateRunning || m.isLive(id) {
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
// (its process died), cancelled or failed. A search that ended on its
// budget, or that runs here now, is returned as it is.
func (m *Manager) Resume(ctx context.Context, id string) (Status, error) {
	if !validID(id) {
		return Status{}, fmt.Errorf("search %q: %w", id, ErrNotFound)
	}
	if m.isLive(id) {
		return m.Get(ctx, id)
	}
	rec, steps, err := m.store.load(ctx, id)
	if err != nil {
		return Status{}, err
	}
	switch rec.Status.State {
	case StateDone, StateBudget:
		return m.Get(ctx, id)
	}
	return m.resume(ctx, rec, steps)
}

func (m *Manager) resume(ctx context.Context, rec record, steps []Event) (Status, error) {
	p, err := m.plan(ctx, rec.Request)
	if err != nil {
		return Status{}, err
	}
	r := loadedRun(rec, steps)
	r.done, r.hub = make(chan struct{}), hub{last: r.seq}
	r.st.State, r.st.Error, r.st.UpdatedAt = StateRunning, "", time.Now().UTC()
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
