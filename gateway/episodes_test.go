package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func startEpisode(t *testing.T, st *fakeStack, req map[string]any) episodeStart {
	t.Helper()
	var start episodeStart
	rec := call(t, st.h, http.MethodPost, "/v1/episodes", "/v1/episodes", req, &start)
	if rec.Code != http.StatusCreated {
		t.Fatalf("start: %d %s", rec.Code, rec.Body)
	}
	return start
}

func step(t *testing.T, st *fakeStack, id, completion string) (*stepResponse, *httptest.ResponseRecorder) {
	t.Helper()
	var resp stepResponse
	rec := call(t, st.h, http.MethodPost, "/v1/episodes/"+id+"/step", "/v1/episodes/{id}/step", map[string]any{"completion": completion}, &resp)
	return &resp, rec
}

func TestEpisodeTwoSteps(t *testing.T) {
	st := startFakeStack(t)
	start := startEpisode(t, st, map[string]any{"task_id": "ci/1_add_relu", "max_turns": 3, "reward_fn": "binary"})
	var task taskView
	call(t, st.h, http.MethodGet, "/v1/tasks/ci/1_add_relu", "/v1/tasks/{id}", nil, &task)
	if start.TaskID != "ci/1_add_relu" || start.Turn != 0 || start.MaxTurns != 3 || start.Observation.Prompt != task.Prompt ||
		!start.ExpiresAt.Equal(st.clock.Now().Add(time.Hour)) {
		t.Fatalf("start %+v", start)
	}

	first, rec := step(t, st, start.EpisodeID, "```python\nimport torch  # wrong\n```")
	if rec.Code != http.StatusOK || first.Done || first.Turn != 1 || first.Reward != 0 ||
		first.Observation.Verdict.Status != eval.StatusIncorrect ||
		!strings.Contains(first.Observation.Feedback, "Turn 1 of 3: incorrect") ||
		!strings.Contains(first.Observation.Feedback, "mismatch in trial 0") {
		t.Fatalf("step 1: %d %+v", rec.Code, first)
	}
	st.clock.Advance(50 * time.Minute) // idle, but not past the hour
	second, rec := step(t, st, start.EpisodeID, "```python\nimport torch  # GOOD\n```")
	if rec.Code != http.StatusOK || !second.Done || second.DoneReason != episode.DoneSolved || second.Turn != 2 || second.Reward != 1 ||
		!strings.Contains(second.Observation.Feedback, "Solved") || second.EvalID == "" || second.EvalID == first.EvalID {
		t.Fatalf("step 2: %d %+v", rec.Code, second)
	}
	_, rec = step(t, st, start.EpisodeID, "```python\nimport torch  # GOOD\n```")
	wantError(t, rec, http.StatusConflict, CodeEpisodeDone, "", "is done (solved at turn 2)")

	var ep episodeView
	call(t, st.h, http.MethodGet, "/v1/episodes/"+start.EpisodeID, "/v1/episodes/{id}", nil, &ep)
	if ep.State != episode.StateDone || ep.Turn != 2 || len(ep.History) != 2 || ep.History[0].Completion != "```python\nimport torch  # wrong\n```" ||
		ep.History[1].Observation.Feedback != second.Observation.Feedback || ep.History[1].EvalID != second.EvalID {
		t.Fatalf("episode %+v", ep)
	}

	// Both steps are events for the episode_steps table, every field filled.
	steps := episodeEvents(t, st.bus, 2)
	for i, ev := range steps {
		if ev.EpisodeID != start.EpisodeID || ev.Turn != i+1 || ev.TaskID != "ci/1_add_relu" || ev.EventID == "" ||
			ev.Time.IsZero() || ev.Completion != ep.History[i].Completion || ev.Observation != ep.History[i].Observation.Feedback ||
			ev.EvalID != ep.History[i].EvalID || ev.Status == "" || ev.Done != (i == 1) || ev.Reward != float64(i) {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
}

// episodeEvents reads the first n episode_step events logged on b.
func episodeEvents(t *testing.T, b *bus.Bus, n int) []event.EpisodeStep {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := make(chan event.EpisodeStep, 16)
	go b.Events(ctx, "test-steps", 16, 100*time.Millisecond, func(_ context.Context, es []bus.Event) error {
		for _, e := range es {
			if e.Subject != event.SubjectEpisodeStep {
				continue
			}
			var ev event.EpisodeStep
			if err := json.Unmarshal(e.Data, &ev); err != nil {
				t.Errorf("event %s: %v", e.ID, err)
			}
			got <- ev
		}
		return nil
	})
	var out []event.EpisodeStep
	for len(out) < n {
		select {
		case ev := <-got:
			out = append(out, ev)
		case <-ctx.Done():
			t.Fatalf("%d of %d episode step events", len(out), n)
		}
	}
	return out
}

func TestEpisodeEndsAtMaxTurnsAndExpires(t *testing.T) {
	st := startFakeStack(t)
	one := startEpisode(t, st, map[string]any{"reference": "import torch\nclass Model: pass\n", "max_turns": 1})
	if one.TaskID != "" {
		t.Errorf("inline reference has task_id %q", one.TaskID)
	}
	resp, rec := step(t, st, one.EpisodeID, "no code at all")
	if rec.Code != http.StatusOK || !resp.Done || resp.DoneReason != episode.DoneMaxTurns ||
		resp.Observation.Verdict.Status != eval.StatusInvalidSubmission {
		t.Fatalf("last turn: %d %+v", rec.Code, resp)
	}

	idle := startEpisode(t, st, map[string]any{"task_id": "ci/2_row_softmax"})
	st.clock.Advance(time.Hour)
	_, rec = step(t, st, idle.EpisodeID, "```python\nGOOD\n```")
	wantError(t, rec, http.StatusGone, CodeEpisodeExpired, "", "expired at", "1h0m0s without a step")
	var ep episodeView
	call(t, st.h, http.MethodGet, "/v1/episodes/"+idle.EpisodeID, "/v1/episodes/{id}", nil, &ep)
	if ep.State != episode.StateExpired || len(ep.History) != 0 {
		t.Errorf("expired episode %+v", ep)
	}
}

func TestEpisodeRequestErrors(t *testing.T) {
	st := startFakeStack(t)
	for _, tt := range []struct {
		name   string
		body   any
		status int
		code   Code
		field  string
		want   string
	}{
		{"malformed JSON", []byte(`{"task_id": `), 400, CodeBadJSON, "", "malformed JSON"},
		{"unknown field", map[string]any{"task": "ci/1_add_relu"}, 400, CodeBadJSON, "task", "unknown field"},
		{"no task", map[string]any{}, 400, CodeInvalidRequest, "reference", "a task is required"},
		{"both task forms", map[string]any{"task_id": "ci/1_add_relu", "reference": "x"}, 400, CodeInvalidRequest, "task_id", "not both"},
		{"unknown task", map[string]any{"task_id": "ci/99_nope"}, 404, CodeTaskNotFound, "task_id", `task "ci/99_nope" not found`},
		{"zero turns", map[string]any{"task_id": "ci/1_add_relu", "max_turns": 0}, 400, CodeInvalidRequest, "max_turns", "1..16"},
		{"too many turns", map[string]any{"task_id": "ci/1_add_relu", "max_turns": 17}, 400, CodeInvalidRequest, "max_turns", "1..16"},
		{"unknown reward_fn", map[string]any{"task_id": "ci/1_add_relu", "reward_fn": "speed"}, 400, CodeUnknownRewardFn, "reward_fn", "valid: adaexplore"},
		{"bad option", map[string]any{"task_id": "ci/1_add_relu", "options": map[string]any{"seeds": 0}}, 400, CodeInvalidOptions, "options.seeds", "seeds must be in 1..100"},
		{"reference too large", map[string]any{"reference": strings.Repeat("#", 256<<10+1)}, 413, CodeBodyTooLarge, "reference", "at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(t, st.h, http.MethodPost, "/v1/episodes", "/v1/episodes", tt.body, nil)
			wantError(t, rec, tt.status, tt.code, tt.field, tt.want)
		})
	}
	start := startEpisode(t, st, map[string]any{"task_id": "ci/1_add_relu"})
	for _, tt := range []struct {
		name, id string
		body     any
		status   int
		code     Code
		field    string
		want     string
	}{
		{"no completion", start.EpisodeID, map[string]any{}, 400, CodeInvalidRequest, "completion", "completion is required"},
		{"completion not text", start.EpisodeID, map[string]any{"completion": 3}, 400, CodeBadJSON, "completion", "string"},
		{"completion too large", start.EpisodeID, map[string]any{"completion": strings.Repeat("x", 512<<10+1)}, 413, CodeBodyTooLarge, "completion", "at most"},
		{"finish_reason not text", start.EpisodeID, map[string]any{"completion": "x", "finish_reason": 7}, 400, CodeInvalidRequest, "finish_reason", "a finish reason is a string"},
		{"unknown episode", "ep_NOPE", map[string]any{"completion": "x"}, 404, CodeEpisodeNotFound, "", `episode "ep_NOPE" not found`},
		{"invalid id", "a.b", map[string]any{"completion": "x"}, 404, CodeEpisodeNotFound, "", "not found"},
	} {
		t.Run("step/"+tt.name, func(t *testing.T) {
			rec := call(t, st.h, http.MethodPost, "/v1/episodes/"+tt.id+"/step", "/v1/episodes/{id}/step", tt.body, nil)
			wantError(t, rec, tt.status, tt.code, tt.field, tt.want)
		})
	}
	rec := call(t, st.h, http.MethodGet, "/v1/episodes/ep_NOPE", "/v1/episodes/{id}", nil, nil)
	wantError(t, rec, http.StatusNotFound, CodeEpisodeNotFound, "", "not found")
}

func TestEpisodesWithoutAStore(t *testing.T) {
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	rec := call(t, srv.Handler(), http.MethodPost, "/v1/episodes", "/v1/episodes", map[string]any{"task_id": "x"}, nil)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "episodes are not available")
}

// finish_reason is nullable (openapi.yaml): null is "the server did not say".
func TestEpisodeStepTakesANullFinishReason(t *testing.T) {
	st := startFakeStack(t)
	start := startEpisode(t, st, map[string]any{"task_id": "ci/1_add_relu", "max_turns": 2})
	var resp stepResponse
	rec := call(t, st.h, http.MethodPost, "/v1/episodes/"+start.EpisodeID+"/step", "/v1/episodes/{id}/step",
		map[string]any{"completion": "no code", "finish_reason": nil}, &resp)
	if rec.Code != http.StatusOK || resp.Turn != 1 {
		t.Fatalf("step with finish_reason null: %d %s", rec.Code, rec.Body)
	}
}
