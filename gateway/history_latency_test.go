package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/gateway/history"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// The overview's data endpoint (/ui/overview.json, which the page polls
// every 2 s and which reads the history among the rest) answers within
// 50 ms at p99 with a day of 100,000 evaluations in the Parquet log; the
// history is rebuilt from that log at start. KERNELGATE_HISTORY_ROWS sets
// another count (the figures in docs/measurements/2026-12-07-dashboard-history.md
// are from 100,000); -short uses 10,000; under -race (make test-go), which
// slows everything several times over, 5,000 rows and 100 requests, and
// the latency is logged, not held to a bound. Otherwise the median is held
// to 50 ms (a regression: before the history kept its closed steps it was
// 70 ms), and the p99 too with KERNELGATE_LATENCY_BOUND=1: run alone, as
// the measurement was; under `go test ./...` other packages' tests share
// the cores and make the tail the machine's, not the endpoint's.
func TestOverviewLatencyWithADayInTheLog(t *testing.T) {
	rows, requests := 100_000, 300
	if testing.Short() {
		rows = 10_000
	}
	if raceDetector {
		rows, requests = 5_000, 100
	}
	if n, err := strconv.Atoi(os.Getenv("KERNELGATE_HISTORY_ROWS")); err == nil && n > 0 {
		rows = n
	}
	data := t.TempDir()
	start := time.Now()
	writeLog(t, filepath.Join(data, dataset.LogDir), rows, time.Now())
	t.Logf("wrote %d evaluations through the sink in %s", rows, time.Since(start).Round(time.Millisecond))

	b := startBus(t, bus.Options{})
	srv := New(Config{}, Deps{Bus: b, Ready: func() error { return nil }, Exports: Exports{DataDir: data}, Log: kgtest.Logger(t)})
	stop := srv.startHistory(t.Context())
	defer stop()
	kgtest.CheckFor(t, 5*time.Minute, 10*time.Millisecond, func() error {
		if v, _ := srv.history.View("1h"); !v.Rebuilt.Done {
			return fmt.Errorf("rebuilding")
		}
		return nil
	})
	day, _ := srv.history.View("24h")
	t.Logf("rebuilt %d rows from %d files in %.0f ms", day.Rebuilt.Rows, day.Rebuilt.Files, day.Rebuilt.MS)
	if day.Rebuilt.Rows != rows || day.Evaluations != rows {
		t.Fatalf("rebuilt %d rows, the day holds %d, want %d", day.Rebuilt.Rows, day.Evaluations, rows)
	}

	// Results keep coming while the page polls, as in a run: 200 a second,
	// so the views are read while the history changes.
	live, stopLive := context.WithCancel(t.Context())
	defer stopLive()
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		reward := 0.5
		for i := 0; ; i++ {
			select {
			case <-live.Done():
				return
			case <-tick.C:
			}
			srv.history.Add(history.Eval{At: time.Now(), Status: "correct", RewardFn: "kernelgym_tiered", Reward: &reward,
				TaskHash: fmt.Sprintf("sha256:%064d", i%50), TaskName: "live"})
		}
	}()
	h := srv.Handler()
	for _, window := range []string{"1h", "24h"} {
		n := requests
		lat := make([]time.Duration, 0, n)
		size := 0
		for range n {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/ui/overview.json?window="+window, nil)
			t0 := time.Now()
			h.ServeHTTP(rec, req)
			lat = append(lat, time.Since(t0))
			if rec.Code != http.StatusOK {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			size = rec.Body.Len()
		}
		var got struct {
			History struct {
				Evaluations int `json:"evaluations"`
				Points      []json.RawMessage
			} `json:"history"`
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/ui/overview.json?window="+window, nil))
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.History.Evaluations == 0 || len(got.History.Points) == 0 {
			t.Fatalf("%s: the overview carries no history: %v", window, err)
		}
		slices.Sort(lat)
		p50, p99 := lat[n/2-1], lat[n*99/100-1] // nearest rank
		t.Logf("window %s: %d requests, p50 %s, p99 %s, max %s, %d bytes, %d evaluations, %d points",
			window, n, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), lat[n-1].Round(10*time.Microsecond),
			size, got.History.Evaluations, len(got.History.Points))
		switch {
		case raceDetector:
		case p50 > 50*time.Millisecond:
			t.Errorf("window %s: p50 %s, over 50 ms", window, p50)
		case p99 > 50*time.Millisecond && os.Getenv("KERNELGATE_LATENCY_BOUND") == "1":
			t.Errorf("window %s: p99 %s, over 50 ms", window, p99)
		}
	}
}

// writeLog writes n evaluations through the Parquet sink under root, spread
// evenly over the day before now (less two minutes: the oldest step is
// the one a view of the day starts at): 50 tasks, statuses and rewards of two
// functions mixed, a hack flag on each reward_hack.
func writeLog(t *testing.T, root string, n int, now time.Time) {
	t.Helper()
	sink, err := export.NewSink(root, "latency-test", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	statuses := []eval.Status{eval.StatusCorrect, eval.StatusCorrect, eval.StatusIncorrect, eval.StatusCompileError, eval.StatusRewardHack}
	fns := []string{"kernelgym_tiered", "log_speedup"}
	step := (24*time.Hour - 2*time.Minute) / time.Duration(n+1)
	evs := make([]bus.Event, 0, export.BatchSize)
	for i := range n {
		st := statuses[i%len(statuses)]
		task := i % 50
		v := eval.Verdict{SchemaVersion: eval.SchemaVersion, Status: st, TaskName: fmt.Sprintf("task%d", task),
			TaskHash: fmt.Sprintf("sha256:%064d", task), CodeHash: "sha256:c", HackFlags: []string{}}
		reward := -0.5
		if st == eval.StatusCorrect {
			sp := 0.5 + float64(i%13)/4
			v.Correct, v.Speedup, reward = true, &sp, sp
		}
		if st == eval.StatusRewardHack {
			v.HackFlags, reward = []string{"decoy"}, -1
		}
		id := fmt.Sprintf("e%07d", i)
		e := event.Evaluation{EventID: id, Time: now.Add(-time.Duration(n-i) * step), EvalID: "b_" + id + "-00000", BatchID: "b_" + id,
			TaskID: fmt.Sprintf("ci/task%d", task), Code: "import torch\n# a kernel of a few hundred bytes\n" + id,
			RewardFn: fns[i%len(fns)], Reward: &reward, Verdict: v}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, bus.Event{ID: id, Subject: event.SubjectEvaluation, Data: data, NumDelivered: 1})
		if len(evs) == export.BatchSize || i == n-1 {
			if err := sink.Handle(context.Background(), evs); err != nil {
				t.Fatal(err)
			}
			evs = evs[:0]
		}
	}
}
