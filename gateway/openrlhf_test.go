package gateway

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
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
// in --reward.remote_url's query string.
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

// An invalid sample gets its group's mean valid reward and score (neutral,
// the default): under kernelgym_tiered its 0 would outrank a compile error
// (-0.5) and a wrong kernel (-0.3). The group is the items with its label and
// prompt; one with no valid sample gets 0.
func TestOpenRLHFInvalidSamplesGetTheirGroupsMean(t *testing.T) {
	st := startFakeStack(t)
	const good, wrong, fail = "```python\nimport torch  # GOOD\n```", "```python\nimport torch  # wrong\n```", "```python\nimport torch  # FAIL\n```"
	req := map[string]any{
		"query":   []string{good, wrong, fail, good, fail, fail, wrong},
		"prompts": []string{"p1", "p1", "p1", "p1", "p2", "p1", "p1"},
		"labels":  []string{"ci/1_add_relu", "ci/1_add_relu", "ci/1_add_relu", "ci/1_add_relu", "ci/1_add_relu", "ci/2_row_softmax", "ci/2_row_softmax"},
	}
	for _, tt := range []struct {
		url            string
		rewards, score []float64
	}{
		// Group (add_relu, p1): 0.2, -0.3, 0.2 valid: mean 1/30; scores 1, 0, 1: 2/3.
		{"?reward_fn=kernelgym_tiered", []float64{0.2, -0.3, 1.0 / 30, 0.2, 0, -0.3, -0.3}, []float64{1, 0, 2.0 / 3, 1, 0, 0, 0}},
		{"?reward_fn=kernelgym_tiered&invalid_reward=neutral", []float64{0.2, -0.3, 1.0 / 30, 0.2, 0, -0.3, -0.3}, []float64{1, 0, 2.0 / 3, 1, 0, 0, 0}},
		{"?reward_fn=kernelgym_tiered&invalid_reward=zero", []float64{0.2, -0.3, 0, 0.2, 0, 0, -0.3}, []float64{1, 0, 0, 1, 0, 0, 0}},
	} {
		var resp openRLHFResponse
		rec := call(t, st.h, http.MethodPost, "/openrlhf/reward"+tt.url, "/openrlhf/reward", req, &resp)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", tt.url, rec.Code, rec.Body)
		}
		if !near(resp.Rewards, tt.rewards) || !near(resp.Scores, tt.score) {
			t.Errorf("%s: rewards %v scores %v, want %v %v", tt.url, resp.Rewards, resp.Scores, tt.rewards, tt.score)
		}
		if want := []float64{1, 1, 0, 1, 0, 0, 1}; !slices.Equal(resp.ExtraLogs["valid"], want) {
			t.Errorf("%s: valid %v, want %v", tt.url, resp.ExtraLogs["valid"], want)
		}
	}
	// The same in the body.
	var resp openRLHFResponse
	req["invalid_reward"], req["reward_fn"] = "zero", "kernelgym_tiered"
	if rec := call(t, st.h, http.MethodPost, "/openrlhf/reward", "/openrlhf/reward", req, &resp); rec.Code != http.StatusOK || resp.Rewards[2] != 0 {
		t.Errorf("invalid_reward zero in the body: %d %v", rec.Code, resp.Rewards)
	}
}

// OpenRLHF 0.11.2 posts every sample alone (SingleTurnAgentExecutor: one
// query per request): with group_size the gateway gathers a prompt's samples
// across requests, answers them together once the group is in, and gives
// the invalid one the mean of the others.
func TestOpenRLHFGroupAcrossRequests(t *testing.T) {
	st := startFakeStack(t)
	one := func(code, prompt string) map[string]any {
		return map[string]any{"query": []string{prompt + "```python\nimport torch  # " + code + "\n```"},
			"prompts": []string{prompt}, "labels": []string{"ci/1_add_relu"}}
	}
	post := func(url string, reqs ...map[string]any) ([]openRLHFResponse, time.Duration) {
		t.Helper()
		out := make([]openRLHFResponse, len(reqs))
		start := time.Now()
		var wg sync.WaitGroup
		for i, r := range reqs {
			wg.Go(func() {
				if rec := call(t, st.h, http.MethodPost, url, "/openrlhf/reward", r, &out[i]); rec.Code != http.StatusOK {
					t.Errorf("%s: %d %s", url, rec.Code, rec.Body)
				}
			})
		}
		wg.Wait()
		return out, time.Since(start)
	}
	const tiered = "/openrlhf/reward?reward_fn=kernelgym_tiered"

	// Alone, the failed sample sees no group: 0, above the wrong kernel's -0.3.
	got, _ := post(tiered, one("FAIL", "P0"))
	if got[0].Rewards[0] != 0 || got[0].ExtraLogs["valid"][0] != 0 {
		t.Fatalf("a lone invalid sample: %+v", got[0])
	}
	// Gathered: the whole group is in long before group_wait_s.
	got, took := post(tiered+"&group_size=3&group_wait_s=60", one("GOOD", "P1"), one("wrong", "P1"), one("FAIL", "P1"))
	if took > 20*time.Second {
		t.Errorf("a full group answered after %v: it waited for group_wait_s", took)
	}
	if r := []float64{got[0].Rewards[0], got[1].Rewards[0], got[2].Rewards[0]}; !near(r, []float64{0.2, -0.3, -0.05}) {
		t.Errorf("rewards %v, want the invalid one at the mean of 0.2 and -0.3", r)
	}
	if s := got[2].Scores[0]; s != 0.5 {
		t.Errorf("the invalid sample's score %v, want 0.5 (the valid ones' mean)", s)
	}
	// A group that never fills answers group_wait_s after its first sample,
	// from what came; another prompt's sample is not part of it.
	got, took = post(tiered+"&group_size=3&group_wait_s=3", one("GOOD", "P2"), one("FAIL", "P2"), one("wrong", "P3"))
	if took < 3*time.Second || took > 20*time.Second {
		t.Errorf("an incomplete group answered after %v, want group_wait_s (3 s)", took)
	}
	if r := got[1].Rewards[0]; !near([]float64{r}, []float64{0.2}) {
		t.Errorf("the invalid sample of P2 got %v, want 0.2 (P2's only valid reward; P3 is another group)", r)
	}
}

func near(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestOpenRLHFInvalidRewardErrors(t *testing.T) {
	st := startFakeStack(t)
	body := map[string]any{"query": []string{"x"}, "labels": []string{"ci/1_add_relu"}}
	with := func(k string, v any) map[string]any {
		m := maps.Clone(body)
		m[k] = v
		return m
	}
	for _, tt := range []struct {
		name, query string
		body        any
		field, want string
	}{
		{"none", "?invalid_reward=none", body, "invalid_reward", "cannot take a null reward"},
		{"unknown", "?invalid_reward=mean", body, "invalid_reward", "want neutral, zero or none"},
		{"URL and body differ", "?invalid_reward=zero", with("invalid_reward", "neutral"), "invalid_reward", "differ"},
		{"group_size 0", "?group_size=0", body, "group_size", "1..16"},
		{"group_size not whole", "?group_size=2.5", body, "group_size", "whole number"},
		{"group_size over max items", "", with("group_size", 17), "group_size", "1..16"},
		{"group_size not a number", "?group_size=n", body, "group_size", "not a number"},
		{"group_size NaN", "?group_size=NaN", body, "group_size", "whole number"},
		{"group_size differs", "?group_size=4", with("group_size", 8), "group_size", "differ"},
		{"group_wait_s alone", "?group_wait_s=5", body, "group_wait_s", "needs group_size"},
		{"group_wait_s 0", "?group_size=2&group_wait_s=0", body, "group_wait_s", "(0, 3600]"},
		{"deadline_s 0", "?deadline_s=0", body, "deadline_s", "(0, 3600]"},
		{"deadline_s too long", "", with("deadline_s", 3601), "deadline_s", "(0, 3600]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(t, st.h, http.MethodPost, "/openrlhf/reward"+tt.query, "/openrlhf/reward", tt.body, nil)
			wantError(t, rec, http.StatusBadRequest, CodeInvalidRequest, tt.field, tt.want)
		})
	}
}
