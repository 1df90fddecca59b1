package episode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// A step that cannot be taken.
var (
	ErrDone    = errors.New("episode: done")
	ErrExpired = errors.New("episode: expired")
)

// Evaluation is one completion judged: the verdict, its reward and the
// eval_id of its row in the evaluations table.
type Evaluation struct {
	Verdict eval.Verdict
	Reward  float64
	EvalID  string
}

// Evaluate judges an episode's completion, which answers prompt, by the
// normal evaluation path (the gateway's reward batches). Its error is the
// caller's to read back (Step returns it unwrapped).
type Evaluate func(ctx context.Context, e Episode, completion string, prompt []event.PromptMessage) (Evaluation, error)

// Service owns the episode workflow: check the episode can take a step,
// build the conversation the completion answers, evaluate, apply the
// rules, record the turn and log it (table episode_steps). The HTTP handler
// only parses and answers.
type Service struct {
	Store *Store
	Bus   *bus.Bus
	Log   *slog.Logger
}

// Step takes the next turn of episode id with completion. clientID is who
// asked (logged with the step). Errors: ErrNotFound, ErrDone, ErrExpired,
// ErrConflict (a concurrent step took the turn), evaluate's own, or a store
// error.
func (s *Service) Step(ctx context.Context, id, completion, clientID string, evaluate Evaluate) (Episode, Step, error) {
	e, err := s.Store.Load(ctx, id)
	if err != nil {
		return e, Step{}, err
	}
	switch s.Store.State(e) {
	case StateDone:
		return e, Step{}, fmt.Errorf("%w (%s at turn %d)", ErrDone, e.DoneReason, e.Turn)
	case StateExpired:
		return e, Step{}, ErrExpired
	}
	prompt := s.prompt(ctx, e)
	ev, err := evaluate(ctx, e, completion, prompt)
	if err != nil {
		return e, Step{}, err
	}
	turn := e.Turn + 1
	done, reason := Outcome(ev.Verdict, turn, e.MaxTurns)
	st := Step{
		Turn: turn, Completion: completion, Observation: Observation(ev.Verdict, turn, e.MaxTurns, reason),
		Verdict: ev.Verdict, Reward: ev.Reward, Done: done, DoneReason: reason, EvalID: ev.EvalID,
	}
	next, err := s.Store.Commit(ctx, e, st)
	if err != nil {
		return e, st, err
	}
	st.At = next.UpdatedAt
	s.log(ctx, next, st, prompt, clientID)
	return next, st, nil
}

// prompt is the conversation the policy answers at e's next turn: the task
// prompt, then each earlier completion and the feedback on it. Without the
// history (the store failed) it is the task prompt alone.
func (s *Service) prompt(ctx context.Context, e Episode) []event.PromptMessage {
	msgs := []event.PromptMessage{{Role: "user", Content: e.Prompt}}
	hist, err := s.Store.History(ctx, e)
	if err != nil {
		s.logger().Warn("episode history unreadable; the step's logged prompt is the task prompt alone", "episode", e.ID, "err", err)
		return msgs
	}
	for _, h := range hist {
		msgs = append(msgs, event.PromptMessage{Role: "assistant", Content: h.Completion},
			event.PromptMessage{Role: "user", Content: h.Observation})
	}
	return msgs
}

// log publishes the step on events.episode_step with the prompt it
// answered. The step is already recorded, so a failure is logged, not
// returned.
func (s *Service) log(ctx context.Context, e Episode, st Step, prompt []event.PromptMessage, clientID string) {
	ev := event.EpisodeStep{
		EventID: e.ID + "-" + strconv.Itoa(st.Turn), Time: st.At, EpisodeID: e.ID, Turn: st.Turn, ClientID: clientID,
		TaskID: cmp.Or(e.TaskID, e.TaskHash), Prompt: prompt, Completion: st.Completion, Observation: st.Observation,
		Reward: st.Reward, Done: st.Done, DoneReason: st.DoneReason, MaxTurns: e.MaxTurns,
		EvalID: st.EvalID, Status: string(st.Verdict.Status), Speedup: st.Verdict.Speedup,
	}
	if err := event.Publish(ctx, s.Bus, ev); err != nil {
		s.logger().Error("logging an episode step failed", "episode", e.ID, "turn", st.Turn, "err", err)
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
