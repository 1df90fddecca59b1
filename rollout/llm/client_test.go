package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/rollout"
	"github.com/kernelgate/kernelgate/rollout/llm"
)

// newClient talks to url with fast backoff; mod adjusts the config.
func newClient(t *testing.T, url string, mod ...func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: url, Model: "test-model", BackoffBase: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := llm.New(cfg, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ask(text, purpose string) rollout.Request {
	return rollout.Request{Messages: []rollout.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: text}}, Purpose: purpose}
}

func TestRetriesServerErrorsThenSucceeds(t *testing.T) {
	srv := llmtest.New(t, llmtest.Status(500).Repeat(2), llmtest.Reply("ok"))
	c := newClient(t, srv.URL())
	comp, err := c.Complete(t.Context(), ask("hi", "large"))
	if err != nil || comp.Text != "ok" || comp.FinishReason != "stop" || comp.Model != "test-model" {
		t.Fatalf("Complete = %+v, %v; want ok", comp, err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
	tot := c.Totals().ByPurpose["large"]
	if tot.Calls != 1 || tot.Attempts != 3 || tot.Failures != 0 {
		t.Errorf("totals = %+v, want 1 call, 3 attempts, 0 failures", tot)
	}
}

func TestFailsAtOnceOnClientErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   error
	}{
		{401, llm.ErrUnauthorized}, {403, llm.ErrUnauthorized},
		{400, llm.ErrBadRequest}, {404, llm.ErrBadRequest},
	} {
		t.Run(httpName(tc.status), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Status(tc.status))
			c := newClient(t, srv.URL())
			_, err := c.Complete(t.Context(), ask("hi", "sample"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var se *llm.StatusError
			if !errors.As(err, &se) || se.Code != tc.status || !strings.Contains(err.Error(), httpName(tc.status)) {
				t.Errorf("err = %v, want a StatusError naming HTTP %d", err, tc.status)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1 (no retry)", n)
			}
			if f := c.Totals().All.Failures; f != 1 {
				t.Errorf("failures = %d, want 1", f)
			}
		})
	}
}

func httpName(code int) string { return fmt.Sprintf("HTTP %d", code) }

func TestHonoursRetryAfter(t *testing.T) {
	srv := llmtest.New(t, llmtest.Status(429).WithRetryAfter("1").Once(), llmtest.Reply("ok"))
	c := newClient(t, srv.URL())
	if _, err := c.Complete(t.Context(), ask("hi", "large")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("server saw %d requests, want 2", len(reqs))
	}
	// The configured backoff is 20 ms at most: only Retry-After explains a second.
	if gap := reqs[1].At.Sub(reqs[0].At); gap < 900*time.Millisecond || gap > 5*time.Second {
		t.Errorf("retry came %v after the 429, want about 1s (Retry-After)", gap)
	}
}

func TestRateLimitedAfterRetries(t *testing.T) {
	srv := llmtest.New(t, llmtest.Status(429))
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.Retries = 2 })
	_, err := c.Complete(t.Context(), ask("hi", "large"))
	if !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want ErrRateLimited", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3 (1 + 2 retries)", n)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, calls = 3, 12
	srv := llmtest.New(t, llmtest.Reply("ok").After(50*time.Millisecond))
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.Concurrency = limit })
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := c.Complete(t.Context(), ask("hi", "sample")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := srv.MaxInFlight(); got != limit {
		t.Errorf("server saw at most %d requests in flight, want exactly %d", got, limit)
	}
	if got := c.Totals().All.Calls; got != calls {
		t.Errorf("calls = %d, want %d", got, calls)
	}
}

func TestCancelStopsHangingCall(t *testing.T) {
	srv := llmtest.New(t, llmtest.Hang())
	c := newClient(t, srv.URL())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := c.Complete(ctx, ask("hi", "large"))
		done <- err
	}()
	kgtest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if len(srv.Requests()) == 0 {
			return errors.New("no request yet")
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled itself", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Complete did not return within 2s of cancel")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	if tot := c.Totals().All; tot.Canceled != 1 || tot.Failures != 0 {
		t.Errorf("totals = %+v, want 1 canceled, 0 failures", tot)
	}
	// The server saw the client go away (its handler returned).
	kgtest.CheckFor(t, 2*time.Second, 5*time.Millisecond, func() error {
		if srv.InFlight() != 0 {
			return errors.New("request still in flight on the server")
		}
		return nil
	})
}

func TestCancelWhileQueued(t *testing.T) {
	srv := llmtest.New(t, llmtest.Hang())
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.Concurrency = 1 })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go c.Complete(ctx, ask("first", "large")) // holds the only slot
	kgtest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if len(srv.Requests()) == 0 {
			return errors.New("no request yet")
		}
		return nil
	})
	qctx, qcancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer qcancel()
	if _, err := c.Complete(qctx, ask("second", "large")); err != context.DeadlineExceeded {
		t.Errorf("queued call err = %v, want context.DeadlineExceeded", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1 (the queued call never sent)", n)
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	srv := llmtest.New(t, llmtest.Hang().Once(), llmtest.Reply("ok"))
	c := newClient(t, srv.URL(), func(c *llm.Config) { c.Timeout = 100 * time.Millisecond })
	comp, err := c.Complete(t.Context(), ask("hi", "large"))
	if err != nil || comp.Text != "ok" {
		t.Fatalf("Complete = %+v, %v; want ok after one timed-out attempt", comp, err)
	}
	srv2 := llmtest.New(t, llmtest.Hang())
	c2 := newClient(t, srv2.URL(), func(c *llm.Config) { c.Timeout = 50 * time.Millisecond; c.Retries = 1 })
	if _, err := c2.Complete(t.Context(), ask("hi", "large")); !errors.Is(err, llm.ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close() // a port nobody listens on: connection refused
	// Default backoff: retries after ~0.5 s and ~1 s at most.
	c, err := llm.New(llm.Config{BaseURL: url, Model: "m", Retries: 2}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Complete(t.Context(), ask("hi", "large"))
	if !errors.Is(err, llm.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v, want under 3s", d)
	}
	if tot := c.Totals().All; tot.Attempts != 3 || tot.Failures != 1 {
		t.Errorf("totals = %+v, want 3 attempts, 1 failure", tot)
	}
}

func TestBadResponse(t *testing.T) {
	for name, sc := range map[string]llmtest.Script{
		"not json":   llmtest.Malformed("<html>proxy error</html>"),
		"no choices": llmtest.Malformed(`{"id":"x","object":"chat.completion","choices":[]}`),
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t, sc)
			c := newClient(t, srv.URL(), func(c *llm.Config) { c.Retries = 1 })
			if _, err := c.Complete(t.Context(), ask("hi", "large")); !errors.Is(err, llm.ErrBadResponse) {
				t.Errorf("err = %v, want ErrBadResponse", err)
			}
		})
	}
}
