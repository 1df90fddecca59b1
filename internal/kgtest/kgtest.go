// Package kgtest holds test helpers shared by kernelgate's packages (as
// tailscale's tstest does): polling instead of sleeps, and a test logger.
// Imported only from _test.go files.
package kgtest

import (
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"
)

// CheckFor polls f every interval until it returns nil or total elapses, then
// fails t with f's last error (as nats-server's checkFor does).
func CheckFor(t testing.TB, total, interval time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(interval)
	}
	t.Fatalf("checkFor after %s: %v", total, err)
}

// Logger logs at debug level to stderr under -v, and nowhere otherwise.
func Logger(t testing.TB) *slog.Logger {
	t.Helper()
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// Clock is a hand-set clock for code that takes a Now func: it stands still
// until Advance moves it.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
