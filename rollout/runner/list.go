package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// States are the values of Status.State: running, then how a search ended.
var States = []string{StateRunning, StateDone, StateBudget, StateCancelled, StateFailed}

// ListQuery selects searches for Service.List; zero fields select all.
type ListQuery struct {
	State  string // one of States; "": any
	TaskID string // "": any
	// After skips the searches up to and including this place in list
	// order: the previous page's last search.
	After *Mark
	Limit int // at most this many; 0: no limit
}

// Mark is a search's place in list order: newest first (CreatedAt, then
// SearchID, both descending).
type Mark struct {
	CreatedAt time.Time
	SearchID  string
}

// MarkOf is st's place in list order.
func MarkOf(st Status) Mark { return Mark{CreatedAt: st.CreatedAt, SearchID: st.SearchID} }

// compareMarks orders a before b when a is newer.
func compareMarks(a, b Mark) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.SearchID, a.SearchID)
}

// Select is every Service's List over its searches: those of all that
// match q, in list order, after q.After, at most q.Limit, without their
// node lists (GET /v1/searches/{id} has the tree).
func (q ListQuery) Select(all []Status) []Status {
	out := make([]Status, 0, len(all))
	for _, st := range all {
		if (q.State != "" && st.State != q.State) || (q.TaskID != "" && st.TaskID != q.TaskID) ||
			(q.After != nil && compareMarks(MarkOf(st), *q.After) <= 0) {
			continue
		}
		st.Nodes = nil
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Status) int { return compareMarks(MarkOf(a), MarkOf(b)) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// List returns the searches that match q (ListQuery.Select): those running
// here as they are now, the others as last stored.
func (m *Manager) List(ctx context.Context, q ListQuery) ([]Status, error) {
	ids, err := m.store.ids(ctx)
	if err != nil {
		return nil, fmt.Errorf("runner.List: %w", err)
	}
	all := make([]Status, 0, len(ids))
	for _, id := range ids {
		m.mu.Lock()
		r, live := m.runs[id]
		m.mu.Unlock()
		if live {
			all = append(all, r.status())
			continue
		}
		rec, ok, err := m.store.record(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("runner.List: %w", ctx.Err())
		case err != nil:
			m.log.Warn("search record unreadable; not listed", "search_id", id, "err", err)
		case ok:
			all = append(all, rec.Status)
		}
	}
	return q.Select(all), nil
}

// record reads a search's record without its steps; ok is false when
// there is none.
func (s *store) record(ctx context.Context, id string) (rec record, ok bool, err error) {
	b, _, ok, err := s.searches.Get(ctx, id)
	if err != nil || !ok {
		return record{}, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return record{}, false, fmt.Errorf("runner: record %s: %w", id, err)
	}
	return rec, true, nil
}
