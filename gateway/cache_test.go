package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/reward"
)

// evaluationEvents collects the events.evaluation events logged on b.
func evaluationEvents(t *testing.T, b *bus.Bus) func() map[string]event.Evaluation {
	t.Helper()
	var mu sync.Mutex
	got := map[string]event.Evaluation{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.Events(ctx, "test", 50, 500*time.Millisecond, func(_ context.Context, evs []bus.Event) error {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range evs {
				var ee event.Evaluation
				if err := json.Unmarshal(e.Data, &ee); err != nil {
					t.Errorf("event %s: %v", e.ID, err)
				}
				got[e.ID] = ee
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("events: %v", err)
		}
	})
	return func() map[string]event.Evaluation {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(got)
	}
}

func TestResultCache(t *testing.T) {
	srv, b, ev := startFake(t, Config{})
	events := evaluationEvents(t, b)
	codes := []string{"ok A", "slow B", "wrong C"}
	run := func(t *testing.T, extra map[string]any) batchResponse {
		t.Helper()
		req := map[string]any{"reference": ref, "codes": codes, "reward_fn": "binary", "wait_s": 10}
		for k, v := range extra {
			req[k] = v
		}
		rec := post(t, srv.Handler(), "/v1/rewards", req)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		checkSpec(t, http.MethodPost, "/v1/rewards", rec)
		return decodeBatch(t, rec)
	}
	check := func(t *testing.T, got batchResponse, cached []bool, calls []int) {
		t.Helper()
		wantStatuses(t, got, eval.StatusCorrect, eval.StatusTimeout, eval.StatusIncorrect)
		for i := range codes {
			if *got.Cached[i] != cached[i] {
				t.Errorf("item %d: cached %v, want %v", i, *got.Cached[i], cached[i])
			}
			if n := ev.callsOf(codes[i]); n != calls[i] {
				t.Errorf("%q evaluated %d times, want %d", codes[i], n, calls[i])
			}
		}
	}

	first := run(t, nil)
	check(t, first, []bool{false, false, false}, []int{1, 1, 1})
	// The timeout is run again; the deterministic verdicts are not.
	second := run(t, nil)
	check(t, second, []bool{true, false, true}, []int{1, 2, 1})
	if *second.Rewards[0] != 1 || second.Results[0].CodeHash != first.Results[0].CodeHash {
		t.Errorf("cached item 0: reward %v, verdict %+v", *second.Rewards[0], second.Results[0])
	}
	// Another reward function scores the cached verdict afresh.
	other := run(t, map[string]any{"reward_fn": "kernelgym_tiered"})
	check(t, other, []bool{true, false, true}, []int{1, 3, 1})
	if want := reward.KernelGymTiered(*other.Results[2]).Reward; *other.Rewards[2] != want {
		t.Errorf("cached item 2 under kernelgym_tiered: reward %v, want %v", *other.Rewards[2], want)
	}
	// Bypassed, and other options: evaluated again.
	check(t, run(t, map[string]any{"cache": false}), []bool{false, false, false}, []int{2, 4, 2})
	check(t, run(t, map[string]any{"options": map[string]any{"seeds": 2}}), []bool{false, false, false}, []int{3, 5, 3})

	// Cached answers are logged like the others, marked, without run times.
	id := func(i int) string { return fmt.Sprintf("%s-%05d", second.BatchID, i) }
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := len(events()); n < 15 {
			return fmt.Errorf("%d events, want 15", n)
		}
		return nil
	})
	got := events()
	for i, cached := range []bool{true, false, true} {
		e, ok := got[id(i)]
		if !ok {
			t.Fatalf("no event %s", id(i))
		}
		if e.Cached != cached || (e.QueueWaitMS == nil) != cached || e.Verdict.Status == "" || e.Reward == nil {
			t.Errorf("event %s: cached %v queue_wait_ms %v status %s", id(i), e.Cached, e.QueueWaitMS, e.Verdict.Status)
		}
	}
}

// A gateway whose pool runs another torch is not answered with a verdict
// made under the old one, though both share one bus and one cache.
func TestCacheEnvironment(t *testing.T) {
	old, b, ev := startFake(t, Config{})
	upgraded := newFakeGateway(t, Config{}, b, func() []dispatch.Env {
		e := fakeEnvs()
		e[0].Torch = "2.12.0"
		return e
	})
	req := map[string]any{"reference": ref, "codes": []string{"ok env"}, "reward_fn": "binary", "wait_s": 10}
	for i, tt := range []struct {
		srv    *Server
		cached bool
		calls  int
	}{{old, false, 1}, {old, true, 1}, {upgraded, false, 2}, {old, true, 2}} {
		rec := post(t, tt.srv.Handler(), "/v1/rewards", req)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
		got := decodeBatch(t, rec)
		if *got.Cached[0] != tt.cached || ev.callsOf("ok env") != tt.calls {
			t.Errorf("request %d: cached %v, %d evaluations; want %v, %d", i, *got.Cached[0], ev.callsOf("ok env"), tt.cached, tt.calls)
		}
	}
}
