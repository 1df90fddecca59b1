package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateway is a scripted POST /v1/rewards: each answer takes took, says the
// job waited wait and ran exec, and is cached when cached says so; it
// records when each request came and the most in flight at once.
type gateway struct {
	took       time.Duration
	wait, exec float64
	cached     bool

	mu       sync.Mutex
	arrivals []time.Time
	inFlight int
	peak     int
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/rewards" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Codes []string `json:"codes"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Codes) != 1 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.arrivals = append(g.arrivals, time.Now())
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	g.mu.Unlock()
	time.Sleep(g.took)
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	item := map[string]any{"status": "correct"}
	if !g.cached {
		item["queue_wait_ms"], item["exec_ms"] = g.wait, g.exec
	}
	json.NewEncoder(w).Encode(map[string]any{"results": []any{item}, "cached": []bool{g.cached}})
}

func files(t *testing.T) (task, kernel string) {
	dir := t.TempDir()
	task, kernel = filepath.Join(dir, "task.py"), filepath.Join(dir, "kernel.py")
	for _, f := range []string{task, kernel} {
		if err := os.WriteFile(f, []byte("# "+filepath.Base(f)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return task, kernel
}

// figure returns the p50 and p99 of a report's row.
func figure(t *testing.T, out, name string) (p50, p99 float64) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			var n int
			if _, err := fmt.Sscan(rest, &p50, &p99, &n); err == nil {
				return p50, p99
			}
		}
	}
	t.Fatalf("no row %q in\n%s", name, out)
	return 0, 0
}

func TestModesSendAsTheySayAndReportEachFigure(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		c    config
		took time.Duration // each answer's
		peak func(int) bool
		// The first and the last request came at least spanFrom apart and
		// at most spanTo.
		spanFrom, spanTo time.Duration
	}{
		{"one at a time", config{n: 6, concurrency: 1}, 30 * ms, func(p int) bool { return p == 1 }, 5 * 30 * ms, time.Second},
		{"pauses", config{n: 6, concurrency: 1, pause: 100 * ms}, 30 * ms, func(p int) bool { return p == 1 }, 5 * 30 * ms, 5 * 200 * ms},
		{"steady rate", config{n: 6, rate: 50}, 30 * ms, func(p int) bool { return p > 1 }, 5 * 18 * ms, 5 * 40 * ms},
		{"burst", config{n: 6, burst: true}, 300 * ms, func(p int) bool { return p == 6 }, 0, 200 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &gateway{took: tt.took, wait: 4, exec: 20}
			srv := httptest.NewServer(g)
			defer srv.Close()
			c := tt.c
			c.url, c.distinct = srv.URL, true
			c.task, c.kernel = files(t)
			var out bytes.Buffer
			if err := run(c, &out); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + out.String())
			if len(g.arrivals) != c.n || !tt.peak(g.peak) {
				t.Fatalf("%d requests, %d at most in flight", len(g.arrivals), g.peak)
			}
			if span := g.arrivals[len(g.arrivals)-1].Sub(g.arrivals[0]); span < tt.spanFrom || span > tt.spanTo {
				t.Fatalf("requests sent over %s, want %s to %s", span, tt.spanFrom, tt.spanTo)
			}
			if p50, p99 := figure(t, out.String(), "queue wait (queue_wait_ms)"); p50 != 4 || p99 != 4 {
				t.Errorf("queue wait p50 %v p99 %v, want 4", p50, p99)
			}
			if p50, _ := figure(t, out.String(), "exec (exec_ms)"); p50 != 20 {
				t.Errorf("exec p50 %v, want 20", p50)
			}
			trip, _ := figure(t, out.String(), "round trip")
			over, _ := figure(t, out.String(), "gateway overhead (round trip - queue wait - exec)")
			if d := over - (trip - 24); trip < tt.took.Seconds()*1e3 || d < -0.011 || d > 0.011 {
				t.Errorf("overhead p50 %v with round trip p50 %v: want round trip - 24 ms", over, trip)
			}
		})
	}
}

// Cached answers ran nothing: they count in the round trip only.
func TestCachedAnswersHaveNoQueueWait(t *testing.T) {
	g := &gateway{cached: true}
	srv := httptest.NewServer(g)
	defer srv.Close()
	task, kernel := files(t)
	var out bytes.Buffer
	if err := run(config{url: srv.URL, task: task, kernel: kernel, n: 3, concurrency: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "cached 3") || strings.Contains(out.String(), "queue wait") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestFlagsThatCannotWorkTogetherAreRefused(t *testing.T) {
	ok := config{task: "t", kernel: "k", n: 1, concurrency: 1}
	tests := []struct {
		name string
		edit func(*config)
		set  []string
		want string
	}{
		{"no task", func(c *config) { c.task = "" }, nil, "--task and --kernel"},
		{"no requests", func(c *config) { c.n = 0 }, nil, "at least 1"},
		{"negative rate", func(c *config) { c.rate = -1 }, nil, "must not be negative"},
		{"rate and burst", func(c *config) { c.rate, c.burst = 5, true }, nil, "give one"},
		{"rate and concurrency", func(c *config) { c.rate = 5 }, []string{"concurrency"}, "closed loop"},
		{"burst and pause", func(c *config) { c.burst = true }, []string{"pause"}, "closed loop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			set := map[string]bool{}
			for _, s := range tt.set {
				set[s] = true
			}
			err := c.validate(set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("validate: %v, want %q", err, tt.want)
			}
		})
	}
	if err := ok.validate(map[string]bool{"concurrency": true}); err != nil {
		t.Fatalf("the closed loop's flags refused: %v", err)
	}
}
