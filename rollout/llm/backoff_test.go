package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":     0,
		"2":    2 * time.Second,
		"0.5":  500 * time.Millisecond,
		"-1":   0,
		"soon": 0,
		now.Add(30 * time.Second).Format(http.TimeFormat): 30 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	c := &Client{cfg: Config{}.withDefaults()}
	for n, hi := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second} {
		for range 50 {
			if d := c.backoff(n, 0); d < hi/2 || d > hi {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", n, d, hi/2, hi)
			}
		}
	}
	if d := c.backoff(100, 0); d < 5*time.Second || d > 10*time.Second {
		t.Errorf("backoff(100) = %v, want capped at 10s", d)
	}
	if d := c.backoff(0, 3*time.Second); d != 3*time.Second {
		t.Errorf("Retry-After 3s gave %v", d)
	}
	if d := c.backoff(0, time.Hour); d != DefaultRetryAfterMax {
		t.Errorf("Retry-After 1h gave %v, want the %v cap", d, DefaultRetryAfterMax)
	}
}
