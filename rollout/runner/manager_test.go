package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/llmtest"
)

func TestStartRefusesBadRequests(t *testing.T) {
	srv := llmtest.New(t)
	m := newManager(t, openBus(t, t.TempDir()), &fakeEval{}, nil, srv.URL())
	defer m.Close()
	noURL, err := NewManager(t.Context(), Deps{Bus: m.deps.Bus, Eval: &fakeEval{}, Tasks: registry(t)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    *Manager
		req  Request
		want string
	}{
		{"bad policy", m, Request{TaskID: taskID, Steps: 1, Policy: "greedy"}, "policy"},
		{"no steps", m, Request{TaskID: taskID}, "steps"},
		{"too many steps", m, Request{TaskID: taskID, Steps: MaxSteps + 1}, "steps"},
		{"no task", m, Request{Steps: 1}, "task_id or reference"},
		{"both", m, Request{TaskID: taskID, Reference: "x", Steps: 1}, "not both"},
		{"unknown task", m, Request{TaskID: "ci/nope", Steps: 1}, "unknown task_id"},
		{"negative budget", m, Request{TaskID: taskID, Steps: 1, TokenBudget: -1}, "token_budget"},
		{"no LLM url", noURL, Request{TaskID: taskID, Steps: 1}, "no LLM endpoint"},
		{"bad LLM url", m, Request{TaskID: taskID, Steps: 1, LLM: LLMSettings{BaseURL: "ftp://x"}}, "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.m.Start(t.Context(), tt.req)
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrBadRequest about %q", err, tt.want)
			}
		})
	}
	if _, err := m.Get(t.Context(), "s_0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get unknown: %v", err)
	}
	if _, err := m.Get(t.Context(), "../etc"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get bad id: %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a refused request must not call the LLM")
	}
}

// A sample search: every step, its tokens, its log and its replay.
func TestSearchRunsAndReplays(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(fenced(kernel("BROKEN"))).WithUsage(100, 10).Once(),
		llmtest.Reply("I would rather explain the approach in prose.").WithUsage(100, 7).Once(),
		llmtest.Reply(fenced(kernel("OK 1"))).WithUsage(100, 12),
	)
	ev := &fakeEval{}
	m := newManager(t, openBus(t, t.TempDir()), ev, nil, srv.URL())
	defer m.Close()
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 4, Policy: "sample", LLM: LLMSettings{APIKey: "secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.State != StateRunning || !validID(st.SearchID) {
		t.Fatalf("start: %+v", st)
	}
	st = waitState(t, m, st.SearchID, 30*time.Second)
	if st.State != StateDone || st.Steps != 4 || st.Actions["sample"] != 4 {
		t.Fatalf("status: %+v", st)
	}
	if st.TokensIn != 400 || st.TokensOut != 10+7+12+12 {
		t.Fatalf("tokens %d/%d, want 400/41 (the scripted usage)", st.TokensIn, st.TokensOut)
	}
	if len(st.Nodes) != 3 || st.Nodes[0].Status != "compile_error" || st.Best == nil || st.Best.Node != 2 ||
		!strings.Contains(st.Best.Code, "# OK 1") {
		t.Fatalf("nodes %+v best %+v", st.Nodes, st.Best)
	}
	if ev.calls.Load() != 3 {
		t.Fatalf("evaluations %d, want 3 (the prose step has no code)", ev.calls.Load())
	}
	ch, err := m.Subscribe(t.Context(), st.SearchID, 1)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for e := range ch {
		seqs = append(seqs, e.Seq)
		if e.Seq == 2 && (e.Node != 0 || !strings.Contains(e.Error, "no code")) {
			t.Errorf("prose step: %+v", e.Step)
		}
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[2] != 4 {
		t.Fatalf("replay after 1: seqs %v", seqs)
	}
	rec, _, err := m.store.load(t.Context(), st.SearchID)
	if err != nil || rec.Request.LLM.APIKey != "" || rec.Status.State != StateDone || rec.Seq != 4 {
		t.Fatalf("stored record %+v, %v (the key must not be stored)", rec, err)
	}
}
