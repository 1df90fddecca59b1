package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

func TestUnsentKeepsTheNewestAndForgetsWhatItGives(t *testing.T) {
	var u unsent
	for i := range unsentLimit + 10 {
		u.put(fmt.Sprint(i), dispatch.Result{Index: i})
	}
	if _, ok := u.take("0"); ok {
		t.Fatal("the oldest result outlived the limit")
	}
	r, ok := u.take(fmt.Sprint(unsentLimit + 9))
	if !ok || r.Index != unsentLimit+9 {
		t.Fatalf("newest: %+v %v", r, ok)
	}
	if _, ok := u.take(fmt.Sprint(unsentLimit + 9)); ok {
		t.Fatal("a result was given twice")
	}
}

// A result the worker cannot log (EVENTS full: the sink is behind) is not
// evaluated again when its job comes back: it is sent once space returns.
func TestAResultThatCouldNotBeSentIsNotEvaluatedAgain(t *testing.T) {
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir(), NakDelay: 50 * time.Millisecond,
		Limits: bus.Limits{Events: 64 << 10}}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	filler := []byte(`{"pad":"` + strings.Repeat("x", 4000) + `"}`)
	for i := 0; ; i++ { // fill EVENTS: nothing drains it while no sink runs
		if err := b.PublishEvent(t.Context(), "events.evaluation", fmt.Sprint("fill-", i), filler); err != nil {
			break
		}
		if i > 100 {
			t.Fatal("EVENTS never filled")
		}
	}
	ev := &scriptedEvaluator{status: eval.StatusCorrect}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b, ev, testLogger()) }()
	defer func() { cancel(); <-done }()
	sub, err := b.Subscribe(t.Context(), dispatch.ResultsSubject("b1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	job := dispatch.Job{ID: "b1-00000", BatchID: "b1", Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
		EnqueuedAt: time.Now()}
	data, _ := json.Marshal(job)
	if err := b.PublishJob(t.Context(), dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // several deliveries, each refused by the full EVENTS
	if n := ev.calls.Load(); n != 1 {
		t.Fatalf("%d evaluations before space returned, want 1", n)
	}
	// The sink catches up: the events it acks leave EVENTS (interest retention).
	sctx, scancel := context.WithCancel(t.Context())
	sdone := make(chan error, 1)
	go func() {
		sdone <- b.Events(sctx, bus.SinkDurable, 50, 100*time.Millisecond, func(context.Context, []bus.Event) error { return nil })
	}()
	defer func() { scancel(); <-sdone }()
	if r := next(t, sub); r.ID != job.ID || r.Verdict.Status != eval.StatusCorrect {
		t.Fatalf("result %+v", r)
	}
	if n := ev.calls.Load(); n != 1 {
		t.Fatalf("%d evaluations in all, want 1", n)
	}
}
