package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
)

// Cancel mid-search: the in-flight LLM call is cut and the search ends
// cancelled at once; a live subscriber's stream closes.
func TestCancelStopsPromptly(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(fenced(kernel("OK"))).Once(), llmtest.Hang())
	m := newManager(t, openBus(t, t.TempDir()), &fakeEval{}, nil, srv.URL())
	defer m.Close()
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 50, Policy: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := m.Subscribe(t.Context(), st.SearchID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := <-ch; e.Seq != 1 {
		t.Fatalf("first event %+v", e)
	}
	kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if srv.InFlight() != 1 {
			return fmt.Errorf("in flight %d", srv.InFlight())
		}
		return nil
	})
	start := time.Now()
	if _, err := m.Cancel(t.Context(), st.SearchID); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, m, st.SearchID, 5*time.Second)
	if st.State != StateCancelled || st.Steps != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("after cancel (%s): %+v", time.Since(start), st)
	}
	if _, open := <-ch; open {
		t.Fatal("the stream must close when the search ends")
	}
	again, err := m.Cancel(t.Context(), st.SearchID)
	if err != nil || again.State != StateCancelled {
		t.Fatalf("cancel of an ended search: %+v, %v", again, err)
	}
}

// A subscriber that never reads is dropped; the search is not held up.
func TestSlowSubscriberIsDropped(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply("prose, no code"))
	m := newManager(t, openBus(t, t.TempDir()), &fakeEval{}, nil, srv.URL())
	defer m.Close()
	// The engine stops a search after 5 LLM failures in a row; prose is no
	// LLM failure, so this runs its whole budget.
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: subBuffer + 40, Policy: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := m.Subscribe(t.Context(), st.SearchID, 0)
	if err != nil {
		t.Fatal(err)
	}
	st = waitState(t, m, st.SearchID, 60*time.Second)
	if st.State != StateDone || st.Steps != subBuffer+40 {
		t.Fatalf("status %+v", st)
	}
	n := 0
	for range slow {
		n++
	}
	if n >= subBuffer+40 {
		t.Fatalf("the slow subscriber got all %d events; it should have been dropped", n)
	}
}

// Resume after a restart: k steps, the manager and the bus closed, both
// reopened on the same directory, ResumeAll: the search ends at N steps
// and the LLM was not asked again for the first k.
func TestResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t,
		llmtest.Reply(fenced(kernel("OK"))).WithUsage(50, 5).Repeat(3),
		llmtest.Hang().Once(),
	)
	b := openBus(t, dir)
	m := newManager(t, b, &fakeEval{}, nil, srv.URL())
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 6, Policy: "sample", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	id := st.SearchID
	kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if s, _ := m.Get(t.Context(), id); s.Steps != 3 || srv.InFlight() != 1 {
			return fmt.Errorf("steps %d, in flight %d", s.Steps, srv.InFlight())
		}
		return nil
	})
	m.Close()
	b.Close()

	srv.Add(llmtest.Reply(fenced(kernel("OK again"))).WithUsage(50, 5))
	b = openBus(t, dir)
	defer b.Close()
	m = newManager(t, b, &fakeEval{}, nil, srv.URL())
	defer m.Close()
	if st, err := m.Get(t.Context(), id); err != nil || st.State != StateRunning || st.Steps != 3 {
		t.Fatalf("stored status before resume: %+v, %v", st, err)
	}
	ids, err := m.ResumeAll(t.Context())
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("ResumeAll = %v, %v", ids, err)
	}
	st = waitState(t, m, id, 30*time.Second)
	if st.State != StateDone || st.Steps != 6 || len(st.Nodes) != 6 || st.TokensIn != 300 {
		t.Fatalf("resumed: %+v", st)
	}
	// 3 answered, 1 cut by the shutdown, then 3 for steps 4..6.
	if n := len(srv.Requests()); n != 7 {
		t.Fatalf("LLM requests %d, want 7", n)
	}
	ch, err := m.Subscribe(t.Context(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	for e := range ch {
		if e.Seq != seq+1 {
			t.Fatalf("seq %d after %d", e.Seq, seq)
		}
		seq = e.Seq
	}
	if seq != 6 {
		t.Fatalf("replayed %d steps, want 6", seq)
	}
	if again, _ := m.ResumeAll(t.Context()); len(again) != 0 {
		t.Fatalf("an ended search was resumed again: %v", again)
	}
}

// An ended search leaves the gateway's memory (it is read from the store from
// then on), so memory holds live searches only; reading it back does not
// bring it back into memory, and it still reads as it ended.
func TestEndedSearchesAreNotKeptInMemory(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(fenced(kernel("OK"))))
	m := newManager(t, openBus(t, t.TempDir()), &fakeEval{}, nil, srv.URL())
	defer m.Close()
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 2, Policy: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	end := waitState(t, m, st.SearchID, 10*time.Second)
	kgtest.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.runs) != 0 {
			return fmt.Errorf("%d runs in memory after the end", len(m.runs))
		}
		return nil
	})
	got, err := m.Get(t.Context(), st.SearchID)
	if err != nil || got.State != end.State || got.Steps != 2 {
		t.Fatalf("read back: %+v, %v (ended as %+v)", got, err, end)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.runs) != 0 {
		t.Fatal("reading an ended search kept it in memory")
	}
}

// A search left running whose steps the store lost (a damaged block) ends
// failed at the next start instead of staying running; one that had ended
// is left as it was.
func TestResumeAllEndsASearchWhoseStepsWereLost(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t,
		llmtest.Reply(fenced(kernel("OK"))).WithUsage(50, 5).Repeat(5),
		llmtest.Hang().Once(),
	)
	b := openBus(t, dir)
	m := newManager(t, b, &fakeEval{}, nil, srv.URL())
	ended, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 2, Policy: "sample", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, m, ended.SearchID, 10*time.Second)
	running, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 6, Policy: "sample", Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if s, _ := m.Get(t.Context(), running.SearchID); s.Steps != 3 || srv.InFlight() != 1 {
			return fmt.Errorf("steps %d, in flight %d", s.Steps, srv.InFlight())
		}
		return nil
	})
	m.Close()
	for _, id := range []string{ended.SearchID, running.SearchID} {
		if err := m.store.steps.Delete(t.Context(), stepKey(id, 2)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()

	b = openBus(t, dir)
	defer b.Close()
	m = newManager(t, b, &fakeEval{}, nil, srv.URL())
	defer m.Close()
	ids, err := m.ResumeAll(t.Context())
	if err != nil || len(ids) != 0 {
		t.Fatalf("ResumeAll = %v, %v; want none resumed", ids, err)
	}
	rec, ok, err := m.store.record(t.Context(), running.SearchID)
	if err != nil || !ok || rec.Status.State != StateFailed || !strings.Contains(rec.Status.Error, "step 2 of 3 is missing") {
		t.Fatalf("the search whose steps were lost: %+v, %v, %v; want failed, naming the missing step", rec.Status, ok, err)
	}
	if rec, _, _ := m.store.record(t.Context(), ended.SearchID); rec.Status.State != StateDone {
		t.Fatalf("the ended search: %+v, want done as it was", rec.Status)
	}
}
