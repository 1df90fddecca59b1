package episode

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func openStore(t *testing.T, dir string, c *kgtest.Clock) (*Store, *bus.Bus) {
	t.Helper()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	s, err := Open(t.Context(), b, Config{Idle: time.Hour, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

func newEpisode() Episode {
	return Episode{TaskID: "ci/1_add", TaskName: "1_add", TaskHash: "sha256:x", Reference: "src",
		Prompt: "p", MaxTurns: 2, RewardFn: "binary", Options: eval.DefaultOptions()}
}

func TestStoreLifecycle(t *testing.T) {
	c := kgtest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	s, b := openStore(t, dir, c)
	ctx := t.Context()
	e, err := s.Start(ctx, newEpisode())
	if err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || e.Turn != 0 || !e.ExpiresAt.Equal(c.Now().Add(time.Hour)) || s.State(e) != StateActive {
		t.Fatalf("Start = %+v", e)
	}
	for _, id := range []string{"ep_nope", "bad id", "x.1", ""} {
		if _, err := s.Load(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q) = %v, want ErrNotFound", id, err)
		}
	}

	c.Advance(30 * time.Minute)
	e1, err := s.Commit(ctx, e, Step{Turn: 1, Completion: "first", Reward: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if e1.Turn != 1 || !e1.ExpiresAt.Equal(c.Now().Add(time.Hour)) {
		t.Errorf("after commit: %+v", e1)
	}
	// A concurrent step that loaded the same state loses.
	if _, err := s.Commit(ctx, e, Step{Turn: 1, Completion: "racer"}); !errors.Is(err, ErrConflict) {
		t.Errorf("second commit of turn 1: %v, want ErrConflict", err)
	}
	if _, err := s.Commit(ctx, e1, Step{Turn: 3}); err == nil {
		t.Error("committed turn 3 after turn 1")
	}
	e2, err := s.Commit(ctx, e1, Step{Turn: 2, Completion: "second", Done: true, DoneReason: DoneSolved})
	if err != nil || !e2.Done || s.State(e2) != StateDone {
		t.Fatalf("turn 2: %+v %v", e2, err)
	}

	// Everything survives a restart.
	b.Close()
	s2, _ := openStore(t, dir, c)
	got, err := s2.Load(ctx, e.ID)
	if err != nil || got.Turn != 2 || !got.Done || got.DoneReason != DoneSolved || got.Reference != "src" {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	hist, err := s2.History(ctx, got)
	if err != nil || len(hist) != 2 || hist[0].Completion != "first" || hist[1].Completion != "second" || hist[1].At.IsZero() {
		t.Fatalf("history %+v %v", hist, err)
	}
}

func TestStoreExpiry(t *testing.T) {
	c := kgtest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s, _ := openStore(t, t.TempDir(), c)
	e, err := s.Start(t.Context(), newEpisode())
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(59 * time.Minute)
	if s.State(e) != StateActive {
		t.Error("expired before the idle timeout")
	}
	c.Advance(time.Minute)
	if s.State(e) != StateExpired {
		t.Error("not expired after the idle timeout")
	}
	e.Done = true
	if s.State(e) != StateDone {
		t.Error("a done episode reads as expired")
	}
}

// A crash between the step's write and the episode's: Load applies the step.
func TestLoadRepairsAnUnrecordedStep(t *testing.T) {
	c := kgtest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s, _ := openStore(t, t.TempDir(), c)
	ctx := t.Context()
	e, err := s.Start(ctx, newEpisode())
	if err != nil {
		t.Fatal(err)
	}
	st := Step{Turn: 1, Completion: "c", At: c.Now()}
	data, _ := json.Marshal(st)
	if _, err := s.kv.Create(ctx, stepKey(e.ID, 1), data); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, e.ID)
	if err != nil || got.Turn != 1 {
		t.Fatalf("Load = %+v %v, want turn 1", got, err)
	}
	again, err := s.Load(ctx, e.ID)
	if err != nil || again.Turn != 1 {
		t.Fatalf("second Load = %+v %v", again, err)
	}
}
