package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/reward"
	"github.com/kernelgate/kernelgate/tasks"
)

func (s *Server) episodeRoutes(r *gin.Engine) {
	r.POST("/v1/episodes", s.startEpisode)
	r.GET("/v1/episodes/:id", s.getEpisode)
	r.POST("/v1/episodes/:id/step", s.stepEpisode)
}

// episodeRequest is the body of POST /v1/episodes (schema EpisodeRequest).
type episodeRequest struct {
	TaskID    *string         `json:"task_id"`
	Reference *string         `json:"reference"`
	MaxTurns  *int            `json:"max_turns"`
	RewardFn  string          `json:"reward_fn"`
	Options   json.RawMessage `json:"options"`
}

// episodeStart is the 201 body of POST /v1/episodes (schema EpisodeStart).
type episodeStart struct {
	EpisodeID   string            `json:"episode_id"`
	TaskID      string            `json:"task_id,omitempty"`
	Observation promptObservation `json:"observation"`
	Turn        int               `json:"turn"`
	MaxTurns    int               `json:"max_turns"`
	ExpiresAt   time.Time         `json:"expires_at"`
}

type promptObservation struct {
	Prompt string `json:"prompt"`
}

// stepObservation is what the policy sees after a step.
type stepObservation struct {
	Feedback string       `json:"feedback"`
	Verdict  eval.Verdict `json:"verdict"`
}

// stepResponse is the 200 body of POST /v1/episodes/{id}/step (schema StepResponse).
type stepResponse struct {
	EpisodeID   string          `json:"episode_id"`
	Observation stepObservation `json:"observation"`
	Reward      float64         `json:"reward"`
	// Valid is false where the reward says nothing of the completion (a task
	// error, a harness error): a trainer drops the step, as /v1/rewards says.
	Valid      bool      `json:"valid"`
	Done       bool      `json:"done"`
	DoneReason string    `json:"done_reason,omitempty"`
	Turn       int       `json:"turn"`
	MaxTurns   int       `json:"max_turns"`
	EvalID     string    `json:"eval_id"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// stepView is one turn of GET /v1/episodes/{id} (schema EpisodeStep).
type stepView struct {
	Turn        int             `json:"turn"`
	Completion  string          `json:"completion"`
	Observation stepObservation `json:"observation"`
	Reward      float64         `json:"reward"`
	Valid       bool            `json:"valid"`
	Done        bool            `json:"done"`
	EvalID      string          `json:"eval_id"`
	At          time.Time       `json:"at"`
}

// episodeView is the 200 body of GET /v1/episodes/{id} (schema Episode).
type episodeView struct {
	EpisodeID  string        `json:"episode_id"`
	TaskID     string        `json:"task_id,omitempty"`
	TaskName   string        `json:"task_name"`
	TaskHash   string        `json:"task_hash"`
	State      episode.State `json:"state"`
	Turn       int           `json:"turn"`
	MaxTurns   int           `json:"max_turns"`
	Done       bool          `json:"done"`
	DoneReason string        `json:"done_reason,omitempty"`
	RewardFn   string        `json:"reward_fn"`
	Prompt     string        `json:"prompt"`
	CreatedAt  time.Time     `json:"created_at"`
	UpdatedAt  time.Time     `json:"updated_at"`
	ExpiresAt  time.Time     `json:"expires_at"`
	History    []stepView    `json:"history"`
}

// episodes is the store, or the 503 that says there is none.
func (s *Server) episodes() (*episode.Store, *apiError) {
	if s.deps.Episodes == nil {
		return nil, newError(CodeNotReady, "", "episodes are not available on this gateway (no episode store)")
	}
	return s.deps.Episodes, nil
}

func (s *Server) startEpisode(c *gin.Context) {
	store, aerr := s.episodes()
	if aerr != nil {
		abort(c, aerr)
		return
	}
	e, aerr := s.parseEpisode(c)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	e, err := store.Start(c.Request.Context(), e)
	if err != nil {
		s.log.Error("starting an episode failed", "err", err)
		abort(c, storeError(err, "the episode store"))
		return
	}
	c.JSON(http.StatusCreated, episodeStart{
		EpisodeID: e.ID, TaskID: e.TaskID, Observation: promptObservation{Prompt: e.Prompt},
		MaxTurns: e.MaxTurns, ExpiresAt: e.ExpiresAt,
	})
}

// parseEpisode validates a start request into an episode to store.
func (s *Server) parseEpisode(c *gin.Context) (episode.Episode, *apiError) {
	var e episode.Episode
	var req episodeRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		return e, aerr
	}
	switch {
	case req.TaskID != nil && req.Reference != nil:
		return e, newError(CodeInvalidRequest, "task_id", "give task_id or reference, not both")
	case req.TaskID != nil:
		t, err := s.deps.Tasks.Get(c.Request.Context(), *req.TaskID)
		if err != nil {
			return e, s.taskError(err, *req.TaskID, "task_id")
		}
		e.TaskID, e.TaskName, e.TaskHash, e.Reference, e.Prompt = t.ID, t.Name, t.TaskHash, t.Source, t.Prompt()
	case req.Reference == nil || trimSpec(*req.Reference) == "":
		return e, newError(CodeInvalidRequest, "reference", "a task is required: give task_id or reference (KernelBench-format source)")
	case len(*req.Reference) > tasks.MaxSourceBytes:
		return e, newError(CodeBodyTooLarge, "reference", "reference is %d bytes; at most %d", len(*req.Reference), tasks.MaxSourceBytes)
	case oneLineReference(*req.Reference) != nil:
		return e, oneLineReference(*req.Reference)
	default:
		t, hash := inlineTask(*req.Reference)
		if rt, ok := s.registeredTask(c.Request.Context(), hash); ok {
			e.TaskID, e.TaskName, e.TaskHash, e.Reference, e.Prompt = rt.ID, rt.Name, rt.TaskHash, rt.Source, rt.Prompt()
			break
		}
		e.TaskName, e.TaskHash, e.Reference, e.Prompt = t.Name, hash, t.Source, tasks.Prompt(t.Source)
	}
	e.MaxTurns = episode.DefaultMaxTurns
	if req.MaxTurns != nil {
		if *req.MaxTurns < 1 || *req.MaxTurns > episode.MaxTurns {
			return e, newError(CodeInvalidRequest, "max_turns", "max_turns must be in 1..%d, got %d", episode.MaxTurns, *req.MaxTurns)
		}
		e.MaxTurns = *req.MaxTurns
	}
	var aerr *apiError
	if e.RewardFn, aerr = parseRewardFn(req.RewardFn); aerr != nil {
		return e, aerr
	}
	e.Options, aerr = s.cfg.parseOptions(req.Options)
	return e, aerr
}

// loadEpisode loads the episode of the request path.
func (s *Server) loadEpisode(ctx context.Context, store *episode.Store, id string) (episode.Episode, *apiError) {
	e, err := store.Load(ctx, id)
	switch {
	case errors.Is(err, episode.ErrNotFound):
		return e, newError(CodeEpisodeNotFound, "", "episode %q not found: it never existed, or it expired more than %s ago and was dropped",
			id, episode.Retention)
	case err != nil:
		s.log.Error("loading an episode failed", "episode", id, "err", err)
		return e, storeError(err, "the episode store")
	}
	return e, nil
}

func (s *Server) getEpisode(c *gin.Context) {
	store, aerr := s.episodes()
	if aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	e, aerr := s.loadEpisode(ctx, store, c.Param("id"))
	if aerr != nil {
		abort(c, aerr)
		return
	}
	hist, err := store.History(ctx, e)
	if err != nil {
		s.log.Error("reading an episode's history failed", "episode", e.ID, "err", err)
		abort(c, storeError(err, "the episode store"))
		return
	}
	v := episodeView{
		EpisodeID: e.ID, TaskID: e.TaskID, TaskName: e.TaskName, TaskHash: e.TaskHash, State: store.State(e),
		Turn: e.Turn, MaxTurns: e.MaxTurns, Done: e.Done, DoneReason: e.DoneReason, RewardFn: e.RewardFn,
		Prompt: e.Prompt, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, ExpiresAt: e.ExpiresAt,
		History: make([]stepView, 0, len(hist)),
	}
	for _, st := range hist {
		v.History = append(v.History, stepView{
			Turn: st.Turn, Completion: st.Completion, Reward: st.Reward, Valid: validFor(e.RewardFn, st.Verdict),
			Done: st.Done, EvalID: st.EvalID, At: st.At,
			Observation: stepObservation{Feedback: st.Observation, Verdict: st.Verdict},
		})
	}
	c.JSON(http.StatusOK, v)
}

// stepRequest is the body of POST /v1/episodes/{id}/step.
type stepRequest struct {
	Completion *string `json:"completion"`
	// FinishReason: why the policy stopped writing (a string, or null when
	// not known); "length" marks the completion cut off.
	FinishReason json.RawMessage `json:"finish_reason"`
}

// maxCompletionBytes bounds a step's completion: it is stored in the
// episode's KV bucket, whose values must stay under NATS's 1 MiB.
const maxCompletionBytes = 512 << 10

// stepEpisode evaluates a completion through runBatch (the /v1/rewards
// path: queue, workers, evaluations log), records the turn and logs it on
// events.episode_step.
func (s *Server) stepEpisode(c *gin.Context) {
	store, aerr := s.episodes()
	if aerr != nil {
		abort(c, aerr)
		return
	}
	var req stepRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	switch {
	case req.Completion == nil:
		abort(c, newError(CodeInvalidRequest, "completion", "completion is required: the policy's raw text (the last ```python block is the code)"))
		return
	case len(*req.Completion) > maxCompletionBytes:
		abort(c, newError(CodeBodyTooLarge, "completion", "completion is %d bytes; at most %d", len(*req.Completion), maxCompletionBytes))
		return
	}
	finish := ""
	if req.FinishReason != nil {
		if finish, aerr = parseFinishReason(req.FinishReason, "finish_reason"); aerr != nil {
			abort(c, aerr)
			return
		}
	}
	evaluate := func(ctx context.Context, e episode.Episode, completion string, prompt []event.PromptMessage) (episode.Evaluation, error) {
		return s.evaluateStep(ctx, e, completion, finish, prompt)
	}
	ctx := c.Request.Context()
	svc := episode.Service{Store: store, Bus: s.deps.Bus, Log: s.log}
	e, st, err := svc.Step(ctx, c.Param("id"), *req.Completion, identityOf(ctx).clientID, evaluate)
	if err != nil {
		abort(c, s.stepError(c.Param("id"), e, store, err))
		return
	}
	c.JSON(http.StatusOK, stepResponse{
		EpisodeID: e.ID, Observation: stepObservation{Feedback: st.Observation, Verdict: st.Verdict},
		Reward: st.Reward, Valid: validFor(e.RewardFn, st.Verdict), Done: st.Done, DoneReason: st.DoneReason,
		Turn: st.Turn, MaxTurns: e.MaxTurns, EvalID: st.EvalID,
		ExpiresAt: e.ExpiresAt,
	})
}

// evaluateStep runs an episode's completion through runBatchToEnd (the
// /v1/rewards path: queue, workers, evaluations log).
func (s *Server) evaluateStep(ctx context.Context, e episode.Episode, completion, finish string, prompt []event.PromptMessage) (episode.Evaluation, error) {
	resp, aerr := s.runBatchToEnd(ctx, batchSpec{
		taskID: e.TaskID, task: e.Harness(), taskHash: e.TaskHash, items: []string{completion}, fromText: true,
		rewardFn: e.RewardFn, options: e.Options, wait: s.cfg.DefaultWait, prompts: [][]event.PromptMessage{prompt},
		finishReasons: []string{finish},
	})
	if aerr != nil {
		return episode.Evaluation{}, aerr
	}
	return episode.Evaluation{Verdict: *resp.Results[0], Reward: *resp.Rewards[0], EvalID: dispatch.EvalID(resp.BatchID, 0)}, nil
}

// validFor is whether fn's reward for v says something of the completion;
// an unknown function (an episode stored by a newer gateway) counts as valid.
func validFor(fn string, v eval.Verdict) bool {
	f, err := reward.Lookup(fn)
	return err != nil || f(v).Valid
}

// stepError is the answer to a step the episode service refused.
func (s *Server) stepError(id string, e episode.Episode, store *episode.Store, err error) *apiError {
	var aerr *apiError
	switch {
	case errors.As(err, &aerr):
		return aerr // the evaluation's own answer
	case errors.Is(err, episode.ErrNotFound):
		return newError(CodeEpisodeNotFound, "", "episode %q not found: it never existed, or it expired more than %s ago and was dropped",
			id, episode.Retention)
	case errors.Is(err, episode.ErrDone):
		return newError(CodeEpisodeDone, "", "episode %s is done (%s at turn %d); start a new one", e.ID, e.DoneReason, e.Turn)
	case errors.Is(err, episode.ErrExpired):
		return newError(CodeEpisodeExpired, "", "episode %s expired at %s after %s without a step; start a new one",
			e.ID, e.ExpiresAt.Format(time.RFC3339), store.Idle())
	case errors.Is(err, episode.ErrConflict):
		return newError(CodeStepConflict, "", "turn %d of episode %s was taken by a concurrent step; GET the episode for its state", e.Turn+1, e.ID)
	}
	s.log.Error("an episode step failed", "episode", id, "err", err)
	return storeError(err, "the episode store")
}
