package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
)

// post sends one chat request with a single user message.
func post(t *testing.T, ctx context.Context, url, user string) (int, http.Header, map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":%q}],"temperature":0.5,"max_tokens":64}`, user)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return resp.StatusCode, resp.Header, out
}

func content(out map[string]any) (text, finish string) {
	ch := out["choices"].([]any)[0].(map[string]any)
	return ch["message"].(map[string]any)["content"].(string), ch["finish_reason"].(string)
}

func TestScriptOrderMatchAndTimes(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply("fix").OnUser("error:").Repeat(2),
		llmtest.Status(500).WithRetryAfter("3").Once(),
		llmtest.Reply("default"),
	)
	var got []string
	for _, user := range []string{"error: x", "write", "write", "error: y", "error: z"} {
		code, hdr, out := post(t, t.Context(), srv.URL(), user)
		switch code {
		case 200:
			text, _ := content(out)
			got = append(got, text)
		default:
			got = append(got, fmt.Sprintf("%d/%s/%s", code, hdr.Get("Retry-After"), out["error"].(map[string]any)["type"]))
		}
	}
	want := "fix 500/3/server_error default fix default"
	if strings.Join(got, " ") != want {
		t.Errorf("answers %q, want %q", strings.Join(got, " "), want)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 || reqs[3].LastUser() != "error: y" || reqs[0].System() != "sys" || reqs[0].Model != "m" ||
		*reqs[0].Temperature != 0.5 || reqs[0].MaxTokens != 64 {
		t.Errorf("recorded %+v", reqs[0])
	}
}

func TestResponseShape(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply("abcdefgh").WithUsage(7, 2).Once(),
		llmtest.Truncated("abcde").Once(),
		llmtest.Reply("x").WithoutUsage().Once(),
	)
	_, _, out := post(t, t.Context(), srv.URL(), "a")
	if u := out["usage"].(map[string]any); u["prompt_tokens"] != 7.0 || u["completion_tokens"] != 2.0 || u["total_tokens"] != 9.0 {
		t.Errorf("usage = %v", u)
	}
	if out["object"] != "chat.completion" || out["model"] != "m" {
		t.Errorf("response = %v", out)
	}
	_, _, out = post(t, t.Context(), srv.URL(), "a")
	if text, finish := content(out); text != "abcde" || finish != "length" {
		t.Errorf("truncated: %q %q", text, finish)
	}
	if u := out["usage"].(map[string]any); u["completion_tokens"] != float64(llmtest.Estimate("abcde")) {
		t.Errorf("estimated usage = %v", u)
	}
	_, _, out = post(t, t.Context(), srv.URL(), "a")
	if _, ok := out["usage"]; ok {
		t.Errorf("WithoutUsage sent usage: %v", out)
	}
}

// recorder is a testing.TB that keeps Errorf messages instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestUnansweredRequestFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := llmtest.New(rec, llmtest.Reply("only once").Once())
	post(t, t.Context(), srv.URL(), "one")
	code, _, _ := post(t, t.Context(), srv.URL(), "two")
	if code != 500 || len(rec.errs) != 1 || !strings.Contains(rec.errs[0], `"two"`) {
		t.Errorf("status %d, errors %q; want 500 and one error naming the request", code, rec.errs)
	}
	srv.Add(llmtest.Reply("more"))
	if code, _, out := post(t, t.Context(), srv.URL(), "three"); code != 200 || out["choices"] == nil {
		t.Errorf("after Add: %d %v", code, out)
	}
}

func TestHangEndsWithTheClientOrTheServer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Hang())
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", bytes.NewBufferString(`{"model":"m","messages":[]}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("a hanging answer came back")
	}
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/chat/completions", bytes.NewBufferString(`{"model":"m","messages":[]}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	kgtest.CheckFor(t, 5*time.Second, time.Millisecond, func() error {
		if n := len(srv.Requests()); n != 2 || srv.InFlight() != 1 {
			return fmt.Errorf("%d requests, %d in flight; want 2 and 1", n, srv.InFlight())
		}
		return nil
	})
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not release a hanging request")
	}
}

func TestOtherPaths(t *testing.T) {
	srv := llmtest.New(t)
	resp, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models = %d, want 404", resp.StatusCode)
	}
}
