package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// After the burst a key gets 429 rate_limited with Retry-After; another
// key has its own bucket, and the probes are never limited.
func TestRateLimitPerKey(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"a": "reward", "b": "reward"})
	srv := New(Config{RateLimit: 0.5, RateBurst: 2}, Deps{Bus: startBus(t, bus.Options{}), Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	h := srv.Handler()
	for i := range 2 {
		if rec := request(t, h, "POST", "/v1/rewards", "Bearer "+keys["a"], []byte("{")); rec.Code != 400 {
			t.Fatalf("request %d within the burst: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := request(t, h, "POST", "/v1/rewards", "Bearer "+keys["a"], []byte("{"))
	if rec.Code != 429 {
		t.Fatalf("past the burst: %d %s", rec.Code, rec.Body)
	}
	checkSpec(t, "POST", "/v1/rewards", rec)
	e := decodeError(t, rec)
	if e.Code != CodeRateLimited || !strings.Contains(e.Message, `key "a"`) || !strings.Contains(e.Message, "0.5 requests/s (burst 2)") {
		t.Errorf("error %+v", e)
	}
	if got := rec.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2 (one token every 2 s)", got)
	}
	if rec := request(t, h, "POST", "/v1/rewards", "Bearer "+keys["b"], []byte("{")); rec.Code != 400 {
		t.Errorf("another key: %d %s", rec.Code, rec.Body)
	}
	for range 5 {
		if rec := request(t, h, "GET", "/healthz", "", nil); rec.Code != 200 {
			t.Fatalf("healthz limited: %d", rec.Code)
		}
	}
	// A refused request costs nothing: the bucket is still empty, not in debt.
	if rec := request(t, h, "POST", "/v1/rewards", "Bearer "+keys["a"], []byte("{")); rec.Header().Get("Retry-After") != "2" {
		t.Errorf("second refusal: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
}

// Unauthenticated callers in open mode share one bucket.
func TestRateLimitOpenModeSharesOneBucket(t *testing.T) {
	srv := New(Config{RateLimit: 0.001, RateBurst: 1}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	if rec := request(t, srv.Handler(), "GET", "/v1/gpus", "", nil); rec.Code != 200 {
		t.Fatalf("first: %d", rec.Code)
	}
	rec := request(t, srv.Handler(), "POST", "/v1/rewards", "", []byte("{"))
	if e := decodeError(t, rec); rec.Code != 429 || !strings.Contains(e.Message, "share one bucket") {
		t.Errorf("second: %d %+v", rec.Code, e)
	}
	if got := rec.Header().Get("Retry-After"); got != "1000" {
		t.Errorf("Retry-After %q, want 1000", got)
	}
}

func TestLimiterRefills(t *testing.T) {
	clock := kgtest.NewClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	l := newLimiter(4, 2, clock.Now)
	for i := range 2 {
		if ok, _ := l.take("k"); !ok {
			t.Fatalf("take %d refused within the burst", i)
		}
	}
	ok, wait := l.take("k")
	if ok || wait != 250*time.Millisecond {
		t.Fatalf("empty bucket: ok %v wait %s, want a refusal for 250ms", ok, wait)
	}
	clock.Advance(250 * time.Millisecond)
	if ok, _ := l.take("k"); !ok {
		t.Fatal("refused after the refill")
	}
	if newLimiter(0, 10, clock.Now) != nil || newLimiter(-1, 10, clock.Now) != nil {
		t.Error("a rate of 0 or less should mean no limiter")
	}
	if l := newLimiter(2.5, 0, clock.Now); l.burst != 3 {
		t.Errorf("default burst %d, want 3", l.burst)
	}
}
