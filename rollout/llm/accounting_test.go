package llm_test

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
)

func TestTokenAccounting(t *testing.T) {
	long := "def f():\n    return 1\n" // 23 bytes: 6 estimated tokens
	srv := llmtest.New(t,
		llmtest.Reply("ok").WithUsage(100, 20).OnUser("with usage"),
		llmtest.Reply(long).WithoutUsage().OnUser("without usage"),
		llmtest.Truncated("```python\nclass ModelNew").WithUsage(10, 4096).OnUser("endless"),
	)
	c := newClient(t, srv.URL())

	comp, err := c.Complete(t.Context(), ask("with usage", "large"))
	if err != nil || comp.PromptTokens != 100 || comp.CompletionTokens != 20 {
		t.Fatalf("with usage: %+v, %v; want 100 in, 20 out", comp, err)
	}
	req := ask("without usage", "small.tune")
	comp, err = c.Complete(t.Context(), req)
	wantIn := llm.Estimate(req.Messages[0].Content) + llm.Estimate(req.Messages[1].Content)
	if err != nil || comp.PromptTokens != wantIn || comp.CompletionTokens != 6 {
		t.Fatalf("without usage: %+v, %v; want %d in, 6 out (estimated)", comp, err, wantIn)
	}
	comp, err = c.Complete(t.Context(), ask("endless", "large"))
	if err != nil || comp.FinishReason != "length" {
		t.Fatalf("truncated: %+v, %v; want FinishReason length and no error", comp, err)
	}
	if comp.Latency <= 0 {
		t.Errorf("latency = %v, want > 0", comp.Latency)
	}

	tot := c.Totals()
	want := map[string]llm.Stats{
		"large":      {Calls: 2, Attempts: 2, Truncated: 1, PromptTokens: 110, CompletionTokens: 4116},
		"small.tune": {Calls: 1, Attempts: 1, Estimated: 1, PromptTokens: wantIn, CompletionTokens: 6},
	}
	for purpose, w := range want {
		got := tot.ByPurpose[purpose]
		if got.Latency <= 0 {
			t.Errorf("%s latency = %v, want > 0", purpose, got.Latency)
		}
		got.Latency = 0
		if got != w {
			t.Errorf("%s totals = %+v, want %+v", purpose, got, w)
		}
	}
	if all := tot.All; all.Calls != 3 || all.PromptTokens != 110+wantIn || all.CompletionTokens != 4122 {
		t.Errorf("overall totals = %+v", all)
	}
}

func TestRequestMapping(t *testing.T) {
	zero, hot := 0.0, 1.1
	srv := llmtest.New(t, llmtest.Reply("ok"))
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.APIKey = "sk-test"; c.MaxTokens = 1000 })
	reqs := []rollout.Request{
		ask("defaults", "large"),
		{Messages: []rollout.Message{{Role: "user", Content: "own"}}, Temperature: &hot, MaxTokens: 50},
		{Messages: []rollout.Message{{Role: "user", Content: "greedy"}}, Temperature: &zero},
	}
	for _, r := range reqs {
		if _, err := c.Complete(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Requests()
	for i, w := range []struct {
		temp float64
		max  int
	}{{0.7, 1000}, {1.1, 50}, {0, 1000}} {
		r := got[i]
		if r.Model != "test-model" || r.Temperature == nil || !near(*r.Temperature, w.temp) || r.MaxTokens != w.max {
			t.Errorf("request %d: model %q temperature %v max_tokens %d; want %g, %d", i, r.Model, r.Temperature, r.MaxTokens, w.temp, w.max)
		}
		if h := r.Header.Get("Authorization"); h != "Bearer sk-test" {
			t.Errorf("request %d: Authorization %q", i, h)
		}
	}
	if got[0].System() != "be brief" || got[0].LastUser() != "defaults" {
		t.Errorf("messages = %+v", got[0].Messages)
	}

	// No key: no Authorization header at all (local vLLM/SGLang).
	c2 := newClient(t, srv.URL())
	if _, err := c2.Complete(t.Context(), ask("x", "")); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[3].Header.Get("Authorization"); h != "" {
		t.Errorf("no key: Authorization %q, want none", h)
	}
	if _, ok := c2.Totals().ByPurpose["unnamed"]; !ok {
		t.Error(`empty purpose not counted as "unnamed"`)
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

func TestConfigValidate(t *testing.T) {
	bad := -1.0
	for name, cfg := range map[string]llm.Config{
		"no url":     {Model: "m"},
		"bad scheme": {BaseURL: "localhost:8000", Model: "m"},
		"no model":   {BaseURL: "http://localhost:8000/v1"},
		"bad temp":   {BaseURL: "http://localhost:8000/v1", Model: "m", Temperature: &bad},
	} {
		if _, err := llm.New(cfg, nil); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

// Reasoning models refuse max_tokens and temperature; the client sends
// max_completion_tokens and no temperature instead of failing every call.
func TestReasoningModelRequest(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply("ok"))
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.Model = "o3-mini"; c.MaxTokens = 777 })
	if _, err := c.Complete(t.Context(), ask("x", "large")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Temperature != nil || r.MaxTokens != 777 || !strings.Contains(string(r.Body), `"max_completion_tokens":777`) {
		t.Errorf("reasoning request body %s; want max_completion_tokens 777 and no temperature", r.Body)
	}
}
