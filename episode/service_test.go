package episode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// The workflow of a step, with the evaluation scripted (the gateway's e2e
// tests run it through the real harness): each turn answers the whole
// conversation so far, is recorded and logged once; a done or expired
// episode takes no step and evaluates nothing; the evaluation's own error
// comes back as it was.
func TestServiceStep(t *testing.T) {
	c := kgtest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	store, b := openStore(t, t.TempDir(), c)
	svc := &Service{Store: store, Bus: b, Log: kgtest.Logger(t)}
	ctx := t.Context()
	e, err := store.Start(ctx, newEpisode())
	if err != nil {
		t.Fatal(err)
	}
	var prompts [][]event.PromptMessage
	verdicts := []eval.Status{eval.StatusIncorrect, eval.StatusCorrect}
	evaluate := func(_ context.Context, _ Episode, completion string, prompt []event.PromptMessage) (Evaluation, error) {
		prompts = append(prompts, prompt)
		v := eval.Verdict{Status: verdicts[len(prompts)-1], Feedback: "fb " + completion}
		return Evaluation{Verdict: v, Reward: float64(len(prompts)), EvalID: "b_x-0000" + string(rune('0'+len(prompts)))}, nil
	}
	e1, st1, err := svc.Step(ctx, e.ID, "first", "alice", evaluate)
	if err != nil || st1.Turn != 1 || st1.Done || e1.Turn != 1 || st1.EvalID != "b_x-00001" {
		t.Fatalf("turn 1: %+v %+v %v", e1, st1, err)
	}
	e2, st2, err := svc.Step(ctx, e.ID, "second", "alice", evaluate)
	if err != nil || st2.Turn != 2 || !st2.Done || st2.DoneReason != DoneSolved || !e2.Done {
		t.Fatalf("turn 2: %+v %+v %v", e2, st2, err)
	}
	if len(prompts[0]) != 1 || len(prompts[1]) != 3 || prompts[1][1].Content != "first" || prompts[1][2].Content != st1.Observation {
		t.Fatalf("the second turn answered %+v", prompts[1])
	}
	if _, _, err := svc.Step(ctx, e.ID, "third", "alice", evaluate); !errors.Is(err, ErrDone) || len(prompts) != 2 {
		t.Fatalf("a done episode: %v after %d evaluations", err, len(prompts))
	}
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n, err := b.EventsBacklog(ctx, "probe"); n != 2 || err != nil {
			return errors.New("the two steps are not logged once each")
		}
		return nil
	})

	other, _ := store.Start(ctx, newEpisode())
	boom := errors.New("queue full")
	if _, _, err := svc.Step(ctx, other.ID, "x", "bob", func(context.Context, Episode, string, []event.PromptMessage) (Evaluation, error) {
		return Evaluation{}, boom
	}); err != boom {
		t.Fatalf("the evaluation's error came back as %v", err)
	}
	c.Advance(2 * time.Hour)
	if _, _, err := svc.Step(ctx, other.ID, "x", "bob", evaluate); !errors.Is(err, ErrExpired) || len(prompts) != 2 {
		t.Fatalf("an expired episode: %v", err)
	}
	if _, _, err := svc.Step(ctx, "ep_nope", "x", "bob", evaluate); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown episode: %v", err)
	}
}
