package gateway

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// fenced wraps code in LLM prose that differs by n: the same work for every n.
func fenced(code string, n int) string {
	return fmt.Sprintf("Attempt %d. Here is the kernel:\n```python\n%s\n```\nIt fuses the ops (%d).", n, code, n)
}

// Identical items of one batch run once; every item still has its own
// entry, in order, and the ones that ran nothing say so.
func TestBatchDedup(t *testing.T) {
	for _, tt := range []struct {
		name  string
		items []string // codes; each item is its code wrapped in its own prose
		calls int      // evaluations
		want  []eval.Status
	}{
		{"64 identical", repeat("ok same", 64), 1, repeatStatus(eval.StatusCorrect, 64)},
		{"8 identical and 2 distinct", append(append(repeat("ok same", 4), "wrong other", "ok third"), repeat("ok same", 4)...), 3,
			append(append(repeatStatus(eval.StatusCorrect, 4), eval.StatusIncorrect, eval.StatusCorrect), repeatStatus(eval.StatusCorrect, 4)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, b, ev := startFake(t, Config{})
			events := evaluationEvents(t, b)
			var completions []string
			for i, code := range tt.items {
				completions = append(completions, fenced(code, i))
			}
			rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{
				"reference": ref, "completions": completions, "reward_fn": "binary", "wait_s": 10})
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			checkSpec(t, http.MethodPost, "/v1/rewards", rec)
			got := decodeBatch(t, rec)
			wantStatuses(t, got, tt.want...)
			if n := ev.total(); n != tt.calls {
				t.Errorf("%d evaluations, want %d", n, tt.calls)
			}
			first := map[string]int{} // code -> index of its first item
			for i, code := range tt.items {
				j, seen := first[code]
				if !seen {
					first[code], j = i, i
				}
				v := got.Results[i]
				if *got.Shared[i] != seen || *got.Cached[i] {
					t.Errorf("item %d: shared %v cached %v, want shared %v, not cached", i, *got.Shared[i], *got.Cached[i], seen)
				}
				if v.CodeHash != eval.HashSource(code) || v.Feedback != got.Results[j].Feedback || *got.Rewards[i] != *got.Rewards[j] {
					t.Errorf("item %d: code hash %s reward %v, not item %d's verdict", i, v.CodeHash, *got.Rewards[i], j)
				}
				if ran := v.ExecMS != nil && v.QueueWaitMS != nil; ran == seen {
					t.Errorf("item %d (shared %v): exec_ms %v queue_wait_ms %v", i, seen, v.ExecMS, v.QueueWaitMS)
				}
			}
			// The stored batch says the same, and every item is logged once,
			// run times only where an evaluation ran.
			again := getBatchUntilDone(t, srv.Handler(), got.BatchID)
			for i := range tt.items {
				if *again.Shared[i] != *got.Shared[i] {
					t.Errorf("GET item %d: shared %v, POST said %v", i, *again.Shared[i], *got.Shared[i])
				}
			}
			kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
				if n := len(events()); n != len(tt.items) {
					return fmt.Errorf("%d events, want %d", n, len(tt.items))
				}
				return nil
			})
			timed := 0
			for _, e := range events() {
				if e.ExecMS != nil {
					timed++
				}
				if e.Cached || e.Completion == nil {
					t.Errorf("event %s: cached %v completion %v", e.EvalID, e.Cached, e.Completion)
				}
			}
			if timed != tt.calls {
				t.Errorf("%d events with run times, want %d", timed, tt.calls)
			}
		})
	}
}

// cache false asks for an evaluation of every item.
func TestBatchDedupBypassed(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{
		"reference": ref, "codes": repeat("ok bench", 3), "cache": false, "wait_s": 10})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	got := decodeBatch(t, rec)
	for i := range 3 {
		if *got.Shared[i] || *got.Cached[i] {
			t.Errorf("item %d: shared %v cached %v", i, *got.Shared[i], *got.Cached[i])
		}
	}
	if n := ev.callsOf("ok bench"); n != 3 {
		t.Errorf("%d evaluations, want 3", n)
	}
}

// Identical requests that come while one evaluation of their work is queued
// or running wait for it, through whichever gateway they come. A verdict
// the cache does not keep (a timeout) is shared with them, marked, but a
// request that comes once it is known runs the work again.
func TestConcurrentIdenticalRequests(t *testing.T) {
	for _, tt := range []struct {
		name string
		code string
		want eval.Status
	}{
		{"correct", "ok hold", eval.StatusCorrect},
		{"timeout", "slow hold", eval.StatusTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			one, b, ev := startFake(t, Config{})
			two := newFakeGateway(t, Config{}, b, fakeEnvs) // a second gateway on the same bus
			ids := make([]string, 32)
			var wg sync.WaitGroup
			for i := range ids {
				wg.Go(func() {
					srv := one
					if i%2 == 1 {
						srv = two
					}
					rec := post(t, srv.Handler(), "/v1/rewards", map[string]any{
						"reference": ref, "completions": []string{fenced(tt.code, i)}, "wait_s": 0})
					if rec.Code != http.StatusAccepted {
						t.Errorf("request %d: %d %s", i, rec.Code, rec.Body)
						return
					}
					ids[i] = decodeRef(t, rec).BatchID
				})
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			// All 32 came while the evaluation was queued or held.
			kgtest.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if ev.callsOf(tt.code) == 0 {
					return fmt.Errorf("not running yet")
				}
				return nil
			})
			close(ev.release)
			ran := 0
			var hash string
			for i, id := range ids {
				got := getBatchUntilDone(t, one.Handler(), id)
				wantStatuses(t, got, tt.want)
				if !*got.Shared[0] {
					ran++
				}
				if *got.Cached[0] {
					t.Errorf("request %d: answered from the cache", i)
				}
				if hash == "" {
					hash = got.Results[0].CodeHash
				} else if got.Results[0].CodeHash != hash {
					t.Errorf("request %d: code hash %s, want %s", i, got.Results[0].CodeHash, hash)
				}
			}
			if n := ev.callsOf(tt.code); n != 1 || ran != 1 {
				t.Errorf("%d evaluations, %d requests not shared; want 1, 1", n, ran)
			}

			// Later: a cacheable verdict comes from the cache; a timeout runs again.
			rec := post(t, two.Handler(), "/v1/rewards", map[string]any{
				"reference": ref, "codes": []string{tt.code}, "wait_s": 10})
			if rec.Code != http.StatusOK {
				t.Fatalf("later request: %d %s", rec.Code, rec.Body)
			}
			got := decodeBatch(t, rec)
			wantStatuses(t, got, tt.want)
			cacheable := tt.want == eval.StatusCorrect
			if *got.Cached[0] != cacheable || *got.Shared[0] {
				t.Errorf("later request: cached %v shared %v, want cached %v", *got.Cached[0], *got.Shared[0], cacheable)
			}
			wantCalls := 1
			if !cacheable {
				wantCalls = 2
			}
			if n := ev.callsOf(tt.code); n != wantCalls {
				t.Errorf("%d evaluations after the later request, want %d", n, wantCalls)
			}
		})
	}
}

// Of two identical evaluations in flight together, one runs and the other
// is marked shared, without run times.
func TestEvaluationShared(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	var ids []string
	for range 2 {
		rec := post(t, srv.Handler(), "/v1/evaluations", map[string]any{"reference": ref, "code": "slow hold eval", "wait_s": 0})
		if rec.Code != http.StatusAccepted {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		ids = append(ids, decodeEvaluation(t, rec).ID)
	}
	close(ev.release)
	shared := 0
	for i, id := range ids {
		var e evaluationResponse
		kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
			r := call(t, srv.Handler(), http.MethodGet, evaluationLocation(id), "/v1/evaluations/{id}", nil, &e)
			if r.Code != http.StatusOK || e.Status != statusDone {
				return fmt.Errorf("%d %s", r.Code, e.Status)
			}
			return nil
		})
		if *e.Shared {
			shared++
		}
		if *e.Cached || (e.ExecMS != nil) == *e.Shared || e.Result.Status != eval.StatusTimeout {
			t.Errorf("evaluation %d: shared %v cached %v exec_ms %v status %s", i, *e.Shared, *e.Cached, e.ExecMS, e.Result.Status)
		}
	}
	if n := ev.callsOf("slow hold eval"); n != 1 || shared != 1 {
		t.Errorf("%d evaluations, %d shared; want 1, 1", n, shared)
	}
}

// OpenRLHF's groups are batches too: identical code for one task runs once
// whatever the prose, the same code for another task is other work.
func TestOpenRLHFDedup(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	other := ref + "# another task\n"
	var query, labels []string
	for i := range 6 {
		query = append(query, "Write ModelNew.\n"+fenced("ok rlhf", i))
		labels = append(labels, ref)
	}
	query = append(query, fenced("ok rlhf", 6), fenced("wrong rlhf", 7))
	labels = append(labels, other, ref)
	var resp openRLHFResponse
	rec := call(t, srv.Handler(), http.MethodPost, "/openrlhf/reward?reward_fn=binary", "/openrlhf/reward",
		map[string]any{"query": query, "labels": labels}, &resp)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if want := []float64{1, 1, 1, 1, 1, 1, 1, 0}; !slices.Equal(resp.Rewards, want) {
		t.Errorf("rewards %v, want %v", resp.Rewards, want)
	}
	if ok, wrong := ev.callsOf("ok rlhf"), ev.callsOf("wrong rlhf"); ok != 2 || wrong != 1 {
		t.Errorf("evaluations: %d of the shared code (want 1 per task, 2), %d of the other (want 1)", ok, wrong)
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func repeatStatus(s eval.Status, n int) []eval.Status {
	out := make([]eval.Status, n)
	for i := range out {
		out[i] = s
	}
	return out
}
