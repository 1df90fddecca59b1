package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backoff is the wait before retry n (from 0): exponential, capped, with the
// upper half jittered so that parallel searches hitting the same overloaded
// server do not retry in lockstep. A server's Retry-After wins.
func (c *Client) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, c.cfg.RetryAfterMax)
	}
	d := c.cfg.BackoffBase << min(n, 30)
	if d <= 0 || d > c.cfg.BackoffMax {
		d = c.cfg.BackoffMax
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// go-openai drops the headers of error responses, so the HTTP client below
// it copies Retry-After into a slot the attempt put in the request context.
type retryAfterKey struct{}

type headerDoer struct{ c *http.Client }

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if resp != nil {
		if slot, ok := req.Context().Value(retryAfterKey{}).(*string); ok {
			*slot = resp.Header.Get("Retry-After")
		}
	}
	return resp, err
}
