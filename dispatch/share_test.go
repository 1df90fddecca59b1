package dispatch

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
)

// The sharing protocol step by step, over a real bus: who runs, who waits,
// who is answered, and when a job runs again.
func TestShare(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir()}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx := t.Context()
	job := func(batch, fn string) Job {
		return Job{ID: batch + "-00000", BatchID: batch, Job: eval.Job{Task: eval.Task{Name: "task " + batch, Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
			RewardFn: fn, Share: true}
	}
	wk, err := WorkKey(job("a", ""))
	if err != nil {
		t.Fatal(err)
	}
	wantClaim := func(j Job, queued time.Time, run bool) {
		t.Helper()
		got, err := Claim(ctx, b, wk, j, queued)
		if err != nil || got != run {
			t.Fatalf("claim %s: run %v (%v), want %v", j.ID, got, err, run)
		}
	}
	result := func(j Job) (Result, bool) {
		t.Helper()
		data, _, ok, err := b.Result(ctx, j.BatchID, j.Index)
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		if ok {
			if err := json.Unmarshal(data, &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, ok
	}
	waiting := func() int {
		t.Helper()
		ws, err := b.Inflight().Values(ctx, wk+".*")
		if err != nil {
			t.Fatal(err)
		}
		return len(ws)
	}

	a, bj, c := job("a", "binary"), job("b", "kernelgym_tiered"), job("c", "binary")
	wantClaim(a, time.Now(), true) // nothing in flight: a runs
	if joined, err := Join(ctx, b, wk, []Job{bj}); err != nil || !joined {
		t.Fatalf("Join while a runs: %v %v", joined, err)
	}
	wantClaim(c, time.Now(), false) // queued while a runs: waits
	wantClaim(a, time.Now(), true)  // a redelivered before its result: runs again
	if n := waiting(); n != 2 {
		t.Fatalf("%d waiters, want b and c", n)
	}
	early := time.Now()

	// a finishes: its worker stores its result, then answers the waiters.
	v := Verdict(eval.TimingCPUInterpreter, a, eval.StatusTimeout, "timed out", "")
	wait, run := 5.0, 100.0
	v.QueueWaitMS, v.ExecMS = &wait, &run
	ra := Result{ID: a.ID, Verdict: v, Reward: 0, Valid: true, QueueWaitMS: wait, ExecMS: run}
	if err := PublishResult(ctx, b, a, ra); err != nil {
		t.Fatal(err)
	}
	if err := Drain(ctx, b, wk, ra); err != nil {
		t.Fatal(err)
	}
	for _, w := range []Job{bj, c} {
		r, ok := result(w)
		if !ok || !r.Shared || r.Cached || r.ID != w.ID || r.Verdict.Status != eval.StatusTimeout ||
			r.Verdict.TaskName != w.Task.Name || r.Verdict.ExecMS != nil || r.ExecMS != 0 {
			t.Errorf("%s: answered %v with %+v", w.ID, ok, r)
		}
	}
	// A waiter that saw a running and registers after its drain answers itself.
	late := job("late", "binary")
	if err := join(ctx, b, wk, owner{ID: a.ID, Batch: a.BatchID, Index: a.Index}, []Job{late}); err != nil {
		t.Fatal(err)
	}
	if r, ok := result(late); !ok || !r.Shared || r.Verdict.Status != eval.StatusTimeout {
		t.Errorf("late: answered %v, %+v", ok, r)
	}
	if n := waiting(); n != 0 {
		t.Errorf("%d waiters left after the drains", n)
	}

	// Queued before a's result was stored: shares it though a timeout is not
	// cached. Queued after: runs again, and becomes the owner.
	d := job("d", "binary")
	wantClaim(d, early, false)
	if r, ok := result(d); !ok || !r.Shared {
		t.Errorf("d: answered %v, %+v", ok, r)
	}
	if joined, err := Join(ctx, b, wk, []Job{job("e", "")}); err != nil || joined {
		t.Errorf("Join once a finished: %v %v, want a job of its own", joined, err)
	}
	f := job("f", "binary")
	wantClaim(f, time.Now(), true)
	wantClaim(c, time.Now(), false) // c redelivered: answered already, runs nothing

	// f stores its result but its drain fails: the redelivery answers the
	// waiters without running again.
	g := job("g", "binary")
	if err := Wait(ctx, b, wk, []Job{g}); err != nil {
		t.Fatal(err)
	}
	vf := Verdict("", f, eval.StatusCorrect, "", "")
	vf.Compiled, vf.Correct = true, true
	if err := PublishResult(ctx, b, f, Result{ID: f.ID, Verdict: vf, Reward: 1, Valid: true}); err != nil {
		t.Fatal(err)
	}
	wantClaim(f, time.Now(), false)
	if r, ok := result(g); !ok || !r.Shared || r.Verdict.Status != eval.StatusCorrect || r.Reward != 1 {
		t.Errorf("g: answered %v, %+v", ok, r)
	}
}

// A shared answer names the job whose evaluation ran, however it got there.
func TestSharedNamesItsSource(t *testing.T) {
	owner := Result{Index: 0, ID: "b_A-00000", Verdict: eval.Verdict{Status: eval.StatusCorrect}}
	job := Job{ID: "b_B-00002", Index: 2, Job: eval.Job{Task: eval.Task{Name: "mine"}}, RewardFn: "binary"}
	if r := Shared(owner, job); !r.Shared || r.Source != "b_A-00000" || r.ID != job.ID || r.Index != 2 {
		t.Errorf("shared %+v", r)
	}
	owner.Source = "b_Z-00001" // the owner's own answer was shared from elsewhere
	if r := Shared(owner, job); r.Source != "b_Z-00001" {
		t.Errorf("source %q, want the run's b_Z-00001", r.Source)
	}
	v := eval.Verdict{Status: eval.StatusCorrect, TaskName: "x"}
	data, err := CacheValue(v, "b_A-00000")
	if err != nil {
		t.Fatal(err)
	}
	got, src, err := CacheEntry(data)
	if err != nil || src != "b_A-00000" || got.Status != v.Status || got.TaskName != "x" {
		t.Errorf("cache entry %+v %q %v", got, src, err)
	}
}
