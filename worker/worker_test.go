package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/harness"
)

// failingEvaluator never manages to evaluate (no zygote): the worker's own
// paths, not the harness's verdicts, are under test here. The real harness
// is exercised end to end in gateway's TestEndToEndRewards.
type failingEvaluator struct{ calls atomic.Int32 }

func (f *failingEvaluator) Evaluate(context.Context, eval.Job) (eval.Verdict, error) {
	f.calls.Add(1)
	return eval.Verdict{}, errors.New("no zygote")
}
func (f *failingEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 2}}
}
func (f *failingEvaluator) Mode() string { return eval.TimingCPUInterpreter }

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func startRun(t *testing.T, ev Evaluator) *bus.Bus {
	t.Helper()
	b, err := bus.Open(t.Context(), bus.Options{DataDir: t.TempDir(), NakDelay: 20 * time.Millisecond, MaxDeliver: 2}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b, ev, testLogger()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		b.Close()
	})
	return b
}

func next(t *testing.T, sub *bus.Subscription) dispatch.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	data, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("no result: %v", err)
	}
	var r dispatch.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFinalDeliveryAnswersHarnessError(t *testing.T) {
	tests := []struct {
		name      string
		rewardFn  string
		wantCalls int32
	}{
		{"evaluation fails every delivery", "binary", 2},
		{"unknown reward function", "nope", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &failingEvaluator{}
			b := startRun(t, ev)
			sub, err := b.Subscribe(t.Context(), dispatch.ResultsSubject("b1"))
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			job := dispatch.Job{ID: "b1-0003", BatchID: "b1", Index: 3, Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code", Options: eval.DefaultOptions()},
				RewardFn: tt.rewardFn, EnqueuedAt: time.Now()}
			data, _ := json.Marshal(job)
			if err := b.PublishJob(t.Context(), dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
				t.Fatal(err)
			}
			r := next(t, sub)
			if r.Index != 3 || r.ID != job.ID || r.Valid || r.Reward != 0 || r.Verdict.Status != eval.StatusHarnessError {
				t.Errorf("result %+v", r)
			}
			if r.Verdict.TaskHash != eval.HashSource("src") || r.Verdict.HackFlags == nil {
				t.Errorf("verdict not filled: %+v", r.Verdict)
			}
			if got := ev.calls.Load(); got != tt.wantCalls {
				t.Errorf("Evaluate called %d times, want %d", got, tt.wantCalls)
			}
			// The verdict is logged as well, under the job id.
			evs := make(chan bus.Event, 1)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			go b.Events(ctx, "test", 10, 100*time.Millisecond, func(_ context.Context, es []bus.Event) error {
				for _, e := range es {
					select {
					case evs <- e:
					default:
					}
				}
				return nil
			})
			select {
			case e := <-evs:
				var ee event.Evaluation
				if err := json.Unmarshal(e.Data, &ee); err != nil {
					t.Fatal(err)
				}
				if e.Subject != event.SubjectEvaluation || e.ID != job.ID || ee.BatchID != "b1" || ee.Verdict.Status != eval.StatusHarnessError {
					t.Errorf("event %s %s %+v", e.Subject, e.ID, ee)
				}
				if ee.Valid == nil || *ee.Valid != r.Valid { // the log says what the API said
					t.Errorf("logged valid %v, answered %v", ee.Valid, r.Valid)
				}
			case <-ctx.Done():
				t.Fatal("no event logged")
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				depth, err := b.QueueDepth(t.Context())
				if err == nil && depth == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("queue depth %d (%v), want 0 after the ack", depth, err)
				}
				time.Sleep(20 * time.Millisecond) // polling, bounded by deadline
			}
		})
	}
}

// recordingEvaluator answers correct and remembers the jobs it got.
type recordingEvaluator struct {
	jobs chan eval.Job
}

func (r *recordingEvaluator) Evaluate(_ context.Context, j eval.Job) (eval.Verdict, error) {
	r.jobs <- j
	return eval.Verdict{Status: eval.StatusCorrect, Correct: true}, nil
}
func (r *recordingEvaluator) Stats() []harness.ZygoteStats {
	return []harness.ZygoteStats{{Label: "cpu", Up: true, Concurrency: 1}}
}
func (r *recordingEvaluator) Mode() string { return eval.TimingCPUInterpreter }

// A task check reaches the harness as one, is announced to its waiter, and
// is not logged as an evaluation; a task id is logged with its evaluation.
func TestTaskCheckIsAnnouncedNotLogged(t *testing.T) {
	ev := &recordingEvaluator{jobs: make(chan eval.Job, 2)}
	b := startRun(t, ev)
	sub, err := b.Subscribe(t.Context(), dispatch.ResultsSubject("b2"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for i, job := range []dispatch.Job{
		{ID: "b2-00000", BatchID: "b2", Index: 0, Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, TaskCheck: true}},
		{ID: "b2-00001", BatchID: "b2", Index: 1, Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: "code"}, TaskID: "ci/t"},
	} {
		job.Options, job.EnqueuedAt = eval.DefaultOptions(), time.Now()
		data, _ := json.Marshal(job)
		if err := b.PublishJob(t.Context(), dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
			t.Fatal(err)
		}
		if r := next(t, sub); r.Index != i || r.Verdict.Status != eval.StatusCorrect {
			t.Fatalf("result %d: %+v", i, r)
		}
		if got := <-ev.jobs; got.TaskCheck != job.TaskCheck {
			t.Errorf("job %d reached the harness with TaskCheck %v", i, got.TaskCheck)
		}
	}
	// Events are in publish order: the first one logged is the evaluation's.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	first := make(chan bus.Event, 1)
	go b.Events(ctx, "test", 10, 100*time.Millisecond, func(_ context.Context, es []bus.Event) error {
		select {
		case first <- es[0]:
		default:
		}
		return nil
	})
	select {
	case e := <-first:
		var ee event.Evaluation
		if err := json.Unmarshal(e.Data, &ee); err != nil {
			t.Fatal(err)
		}
		if e.ID != "b2-00001" || ee.TaskID != "ci/t" {
			t.Errorf("first event %s (task_id %q), want the evaluation b2-00001 of ci/t", e.ID, ee.TaskID)
		}
	case <-ctx.Done():
		t.Fatal("no event logged")
	}
}

// A worker takes only its own mode's jobs: a CPU worker leaves a job queued
// for GPUs alone (it would answer it without a speedup).
func TestAWorkerTakesOnlyItsModesJobs(t *testing.T) {
	ev := &recordingEvaluator{jobs: make(chan eval.Job, 2)}
	b := startRun(t, ev)
	for _, mode := range []string{eval.TimingGPU, eval.TimingCPUInterpreter} {
		job := dispatch.Job{ID: "b3-" + mode, BatchID: "b3", Job: eval.Job{Task: eval.Task{Name: "t", Source: "src"}, Code: mode, Options: eval.DefaultOptions()},
			EnqueuedAt: time.Now()}
		data, _ := json.Marshal(job)
		if err := b.PublishJob(t.Context(), dispatch.Subject(mode), job.ID, data); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-ev.jobs; got.Code != eval.TimingCPUInterpreter {
		t.Fatalf("the CPU worker took the %s job", got.Code)
	}
	select {
	case got := <-ev.jobs:
		t.Fatalf("the CPU worker took the %s job too", got.Code)
	case <-time.After(time.Second):
	}
	if n, err := b.QueueDepth(t.Context()); err != nil || n != 1 {
		t.Fatalf("queue depth %d (%v), want the GPU job still queued", n, err)
	}
	if dispatch.Subject("") != dispatch.Subject(eval.TimingGPU) || dispatch.Durable(eval.TimingCPUInterpreter) == dispatch.Durable(eval.TimingGPU) {
		t.Fatal("an unknown mode queues for GPUs; the two modes have their own consumers")
	}
}

// The harness is handed the queued job's evaluation whole: every field of
// eval.Job, the hashes made when the job was queued among them, and not a
// copy of the fields someone remembered to copy.
func TestTheHarnessGetsTheQueuedEvaluation(t *testing.T) {
	ev := &recordingEvaluator{jobs: make(chan eval.Job, 1)}
	b := startRun(t, ev)
	job := dispatch.Job{ID: "b9-00000", BatchID: "b9", EnqueuedAt: time.Now(), Job: eval.Job{
		Task: eval.Task{Name: "t", Path: "/tasks/t.py", Source: "src"}, Code: "code", Options: eval.DefaultOptions(),
		TaskHash: "sha256:made-when-queued", CodeHash: "sha256:this-too",
	}}
	data, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PublishJob(t.Context(), dispatch.Subject(eval.TimingCPUInterpreter), job.ID, data); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ev.jobs:
		if !reflect.DeepEqual(got, job.Job) {
			t.Errorf("the harness got\n %+v\nqueued\n %+v", got, job.Job)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the job was not evaluated")
	}
}
