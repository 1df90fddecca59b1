package runner

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func listed(sts []Status) []string {
	ids := make([]string, len(sts))
	for i, st := range sts {
		ids[i] = st.SearchID
	}
	return ids
}

func TestListQuerySelect(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	st := func(id, task, state string, ago time.Duration) Status {
		return Status{SearchID: id, TaskID: task, State: state, CreatedAt: t0.Add(-ago), Nodes: []NodeSummary{{Node: 1}}}
	}
	all := []Status{
		st("s_a", "ci/1", StateDone, 3*time.Minute),
		st("s_b", "ci/2", StateRunning, time.Minute),
		st("s_c", "ci/1", StateFailed, 2*time.Minute),
		st("s_d", "ci/1", StateRunning, time.Minute), // same time as s_b: the larger id first
	}
	for _, c := range []struct {
		name string
		q    ListQuery
		want []string
	}{
		{"all, newest first", ListQuery{}, []string{"s_d", "s_b", "s_c", "s_a"}},
		{"state", ListQuery{State: StateRunning}, []string{"s_d", "s_b"}},
		{"task", ListQuery{TaskID: "ci/1"}, []string{"s_d", "s_c", "s_a"}},
		{"both", ListQuery{TaskID: "ci/1", State: StateDone}, []string{"s_a"}},
		{"limit", ListQuery{Limit: 2}, []string{"s_d", "s_b"}},
		{"after a tie", ListQuery{After: &Mark{t0.Add(-time.Minute), "s_d"}}, []string{"s_b", "s_c", "s_a"}},
		{"after, filtered", ListQuery{TaskID: "ci/1", After: &Mark{t0.Add(-time.Minute), "s_b"}, Limit: 1}, []string{"s_c"}},
		{"after the last", ListQuery{After: &Mark{t0.Add(-3 * time.Minute), "s_a"}}, []string{}},
		{"no match", ListQuery{State: StateBudget}, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.q.Select(all)
			if !slices.Equal(listed(got), c.want) {
				t.Fatalf("got %v, want %v", listed(got), c.want)
			}
			for _, st := range got {
				if st.Nodes != nil {
					t.Errorf("%s: nodes %v, want none in a list", st.SearchID, st.Nodes)
				}
			}
		})
	}
	if all[0].Nodes == nil {
		t.Error("Select changed its input")
	}
}

// List reads every stored search, and a search running here as it is now
// rather than as last stored; a restarted manager lists what was stored.
func TestManagerList(t *testing.T) {
	b := openBus(t, t.TempDir())
	defer b.Close()
	m := newManager(t, b, &fakeEval{}, nil, "http://127.0.0.1:1/v1")
	t0 := time.Now().UTC()
	for i, state := range []string{StateDone, StateFailed, StateRunning} {
		st := Status{SearchID: fmt.Sprintf("s_%016x", i), TaskID: taskID, State: state, Actions: map[string]int{},
			CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := m.store.create(t.Context(), record{Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	live := Status{SearchID: fmt.Sprintf("s_%016x", 2), TaskID: taskID, State: StateRunning, Steps: 3,
		CreatedAt: t0.Add(2 * time.Second), Nodes: []NodeSummary{{Node: 1}}}
	m.mu.Lock()
	m.runs[live.SearchID] = newRun(live, Request{})
	m.mu.Unlock()

	got, err := m.List(t.Context(), ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"s_0000000000000002", "s_0000000000000001", "s_0000000000000000"}; !slices.Equal(listed(got), want) {
		t.Fatalf("listed %v, want %v", listed(got), want)
	}
	if got[0].Steps != 3 || got[0].Nodes != nil {
		t.Errorf("the live search is listed as %+v, want its live status without nodes", got[0])
	}
	got, err = m.List(t.Context(), ListQuery{State: StateFailed})
	if err != nil || !slices.Equal(listed(got), []string{"s_0000000000000001"}) || !got[0].CreatedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("failed ones: %+v, %v", got, err)
	}
	m.Close()

	m2 := newManager(t, b, &fakeEval{}, nil, "http://127.0.0.1:1/v1")
	defer m2.Close()
	got, err = m2.List(t.Context(), ListQuery{State: StateRunning})
	if err != nil || len(got) != 1 || got[0].Steps != 0 {
		t.Fatalf("after a restart: %+v, %v (the stored record, not the live one)", got, err)
	}
}
