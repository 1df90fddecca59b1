package gateway

import (
	"net/http"
	"slices"
	"testing"
)

func TestOpenRLHF(t *testing.T) {
	st := startFakeStack(t)
	const inline = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
	prompt := "Write ModelNew.\n```python\n# GOOD: the prompt's own block must not be taken for the answer\n```\n"
	req := map[string]any{
		"query": []string{
			prompt + "```python\nimport torch  # GOOD\n```",
			prompt + "```python\nimport torch  # wrong\n```",
			prompt + "I cannot do this.", // stripped: no code left
			"```python\nimport torch  # GOOD\n```",
			"other prompt\n```python\nimport torch  # HACK\n```",
		},
		"prompts": []string{prompt, prompt, prompt, prompt, "a prompt that is not a prefix"},
		"labels":  []string{"ci/1_add_relu", "ci/2_row_softmax", "ci/1_add_relu", inline, "ci/2_row_softmax"},
	}
	var resp openRLHFResponse
	rec := call(t, st.h, http.MethodPost, "/openrlhf/reward?reward_fn=binary", "/openrlhf/reward", req, &resp)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if want := []float64{1, 0, 0, 1, 0}; !slices.Equal(resp.Rewards, want) || !slices.Equal(resp.Scores, want) {
		t.Errorf("rewards %v scores %v, want %v", resp.Rewards, resp.Scores, want)
	}
	if want := []float64{1, 1, 0, 1, 1}; !slices.Equal(resp.ExtraLogs["compiled"], want) {
		t.Errorf("compiled %v, want %v", resp.ExtraLogs["compiled"], want)
	}
	if want := []float64{0, 0, 0, 0, 1}; !slices.Equal(resp.ExtraLogs["reward_hack"], want) {
		t.Errorf("reward_hack %v, want %v", resp.ExtraLogs["reward_hack"], want)
	}
	for key, want := range map[string][]float64{
		"status_correct":            {1, 0, 0, 1, 0},
		"status_incorrect":          {0, 1, 0, 0, 0},
		"status_invalid_submission": {0, 0, 1, 0, 0},
		"status_reward_hack":        {0, 0, 0, 0, 1},
		"status_harness_error":      {0, 0, 0, 0, 0},
		"valid":                     {1, 1, 1, 1, 1},
	} {
		if !slices.Equal(resp.ExtraLogs[key], want) {
			t.Errorf("%s %v, want %v", key, resp.ExtraLogs[key], want)
		}
	}
	// One batch per label: ci/1_add_relu, ci/2_row_softmax, the inline source.
	st.ev.mu.Lock()
	tasksSeen := map[string]int{}
	for _, j := range st.ev.jobs {
		tasksSeen[j.Task.Path]++
	}
	st.ev.mu.Unlock()
	want := map[string]int{"/tasks/ci/1_add_relu.py": 2, "/tasks/ci/2_row_softmax.py": 2, "/inline/reference.py": 1}
	for k, n := range want {
		if tasksSeen[k] != n {
			t.Errorf("jobs per task %v, want %v (the completion without code is a job too: the worker knows the reference)", tasksSeen, want)
			break
		}
	}
}

func TestOpenRLHFErrors(t *testing.T) {
	st := startFakeStack(t)
	many := make([]string, 17)
	for _, tt := range []struct {
		name, query string
		body        any
		status      int
		code        Code
		field       string
		want        string
	}{
		{"malformed JSON", "", []byte(`{"query": [`), 400, CodeBadJSON, "", "malformed JSON"},
		{"unknown field", "", map[string]any{"queries": []string{"x"}}, 400, CodeBadJSON, "queries", "unknown field"},
		{"no query", "", map[string]any{"labels": []string{}}, 400, CodeInvalidRequest, "query", "query is required"},
		{"too many", "", map[string]any{"query": many, "labels": many}, 400, CodeTooManyItems, "query", "at most 16"},
		{"no labels", "", map[string]any{"query": []string{"x"}}, 400, CodeInvalidRequest, "labels", "labels are required"},
		{"labels short", "", map[string]any{"query": []string{"x", "y"}, "labels": []string{"ci/1_add_relu"}}, 400, CodeInvalidRequest, "labels", "1 labels for 2 queries"},
		{"prompts short", "", map[string]any{"query": []string{"x", "y"}, "prompts": []string{"p"}, "labels": []string{"a", "b"}}, 400, CodeInvalidRequest, "prompts", "1 prompts for 2 queries"},
		{"unknown label", "", map[string]any{"query": []string{"x", "y"}, "labels": []string{"ci/1_add_relu", "ci/99"}}, 404, CodeTaskNotFound, "labels[1]", `"ci/99" is neither a registered task id`},
		{"empty label", "", map[string]any{"query": []string{"x"}, "labels": []string{" "}}, 400, CodeInvalidRequest, "labels[0]", "empty label"},
		{"unknown reward_fn", "?reward_fn=fast", map[string]any{"query": []string{"x"}, "labels": []string{"ci/1_add_relu"}}, 400, CodeUnknownRewardFn, "reward_fn", "valid:"},
		{"reward_fn twice", "?reward_fn=kevin", map[string]any{"query": []string{"x"}, "labels": []string{"ci/1_add_relu"}, "reward_fn": "binary"}, 400, CodeInvalidRequest, "reward_fn", "differ"},
		{"bad option", "", map[string]any{"query": []string{"x"}, "labels": []string{"ci/1_add_relu"}, "options": map[string]any{"timeout_s": 0}}, 400, CodeInvalidOptions, "options.timeout_s", "timeout_s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(t, st.h, http.MethodPost, "/openrlhf/reward"+tt.query, "/openrlhf/reward", tt.body, nil)
			wantError(t, rec, tt.status, tt.code, tt.field, tt.want)
		})
	}
}

// A sample the harness could not evaluate is logged as such: valid 0 and
// status_harness_error 1, so OpenRLHF's logs tell it from a wrong kernel.
func TestOpenRLHFLogsInvalidSamples(t *testing.T) {
	st := startFakeStack(t)
	req := map[string]any{
		"query":  []string{"```python\nimport torch  # FAIL\n```", "```python\nimport torch  # GOOD\n```"},
		"labels": []string{"ci/1_add_relu", "ci/1_add_relu"},
	}
	var resp openRLHFResponse
	rec := call(t, st.h, http.MethodPost, "/openrlhf/reward?reward_fn=binary", "/openrlhf/reward", req, &resp)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for key, want := range map[string][]float64{
		"valid": {0, 1}, "status_harness_error": {1, 0}, "status_correct": {0, 1}, "correct": {0, 1},
	} {
		if !slices.Equal(resp.ExtraLogs[key], want) {
			t.Errorf("%s %v, want %v", key, resp.ExtraLogs[key], want)
		}
	}
}

// The stock OpenRLHF client sends only query, prompts and labels: options ride
// in --remote_rm_url's query string.
func TestOpenRLHFOptionsInTheURL(t *testing.T) {
	st := startFakeStack(t)
	body := func(opts any) map[string]any {
		m := map[string]any{"query": []string{"```python\nimport torch  # GOOD\n```"}, "labels": []string{"ci/1_add_relu"}}
		if opts != nil {
			m["options"] = opts
		}
		return m
	}
	var resp openRLHFResponse
	rec := call(t, st.h, http.MethodPost, "/openrlhf/reward?timeout_s=7&seeds=2&atol=0.001", "/openrlhf/reward", body(map[string]any{"rtol": 0.01}), &resp)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	st.ev.mu.Lock()
	o := st.ev.jobs[len(st.ev.jobs)-1].Options
	st.ev.mu.Unlock()
	if o.TimeoutS != 7 || o.Seeds != 2 || o.Atol == nil || *o.Atol != 0.001 || o.Rtol == nil || *o.Rtol != 0.01 {
		t.Errorf("options reached the job as %+v", o)
	}
	for _, tt := range []struct {
		url   string
		opts  any
		code  Code
		field string
	}{
		{"/openrlhf/reward?timeout_s=7", map[string]any{"timeout_s": 9}, CodeInvalidRequest, "timeout_s"},
		{"/openrlhf/reward?seeds=many", nil, CodeInvalidRequest, "seeds"},
		{"/openrlhf/reward?seeds=2.5", nil, CodeInvalidOptions, "options.seeds"},
	} {
		rec := call(t, st.h, http.MethodPost, tt.url, "/openrlhf/reward", body(tt.opts), nil)
		wantError(t, rec, http.StatusBadRequest, tt.code, tt.field, "")
	}
}
