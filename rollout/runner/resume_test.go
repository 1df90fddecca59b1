package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// Resume with a step budget: the same or none keeps a finished search as
// it is, a smaller one is refused, a larger one runs the extra steps. The
// second manager knows no task: the record's source is what the search
// resumes on.
func TestResumeStepBudget(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(fenced(kernel("OK"))).WithUsage(50, 5))
	b := openBus(t, t.TempDir())
	defer b.Close()
	m := newManager(t, b, &fakeEval{}, nil, srv.URL())
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 2, Policy: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	id := st.SearchID
	if st = waitState(t, m, id, 30*time.Second); st.State != StateDone || st.Steps != 2 {
		t.Fatalf("first run: %+v", st)
	}
	m.Close()

	empty, err := tasks.NewRegistry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err = NewManager(t.Context(), Deps{Bus: b, Eval: &fakeEval{}, Tasks: empty, LLM: llmConfig(srv.URL()), Log: kgtest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, n := range []int{0, 2} {
		if got, err := m.Resume(t.Context(), id, n); err != nil || got.State != StateDone || got.Steps != 2 || got.StepsBudget != 2 {
			t.Fatalf("Resume(%d) of a finished search: %+v, %v", n, got, err)
		}
	}
	if _, err := m.Resume(t.Context(), id, 1); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "budget of 2 steps (2 taken)") {
		t.Fatalf("Resume(1): %v, want a refusal that names the budget", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("LLM requests %d before the extension, want 2", n)
	}
	st, err = m.Resume(t.Context(), id, 5)
	if err != nil || st.State != StateRunning || st.StepsBudget != 5 {
		t.Fatalf("Resume(5): %+v, %v", st, err)
	}
	st = waitState(t, m, id, 30*time.Second)
	if st.State != StateDone || st.Steps != 5 || st.StepsBudget != 5 || len(st.Nodes) != 5 || st.TaskID != taskID {
		t.Fatalf("extended: %+v", st)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Fatalf("LLM requests %d, want 5 (2, then 3 more)", n)
	}
	m.Close()
	m = newManager(t, b, &fakeEval{}, nil, srv.URL())
	defer m.Close()
	if got, err := m.Get(t.Context(), id); err != nil || got.StepsBudget != 5 || got.Steps != 5 {
		t.Fatalf("stored after the extension: %+v, %v", got, err)
	}
}

// A search that spent its token budget is not given more steps: they would
// not run.
func TestResumeRefusesStepsAfterTokenBudget(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(fenced(kernel("OK"))).WithUsage(50, 5))
	m := newManager(t, openBus(t, t.TempDir()), &fakeEval{}, nil, srv.URL())
	defer m.Close()
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 3, TokenBudget: 40, Policy: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	if st = waitState(t, m, st.SearchID, 30*time.Second); st.State != StateBudget || st.Steps != 1 {
		t.Fatalf("first run: %+v", st)
	}
	if _, err := m.Resume(t.Context(), st.SearchID, 6); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "token budget") {
		t.Fatalf("Resume(6): %v", err)
	}
	if got, err := m.Resume(t.Context(), st.SearchID, 0); err != nil || got.State != StateBudget {
		t.Fatalf("Resume(0): %+v, %v", got, err)
	}
}
