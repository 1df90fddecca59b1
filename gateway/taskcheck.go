package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/worker"
)

// publishTaskCheck queues a run of t's reference once in the sandbox (a
// task check, PROTOCOL.md) and returns the subscription its verdict
// arrives on; awaitTaskCheck reads it. Queueing is done in the request, so
// a full queue (429) or a broken one is its answer; the wait is not
// (taskchecks.go), so a client that leaves does not stop the check.
//
// The check goes through the job queue like every evaluation, not to a
// supervisor of this process: a gateway may run where no zygote does
// (`kernelgate worker` on the GPU hosts), a full queue answers 429 here too,
// and the reference is judged by the same workers, on the same devices, as
// the evaluations that will use it. It does not go through runBatch: a task
// check has no code to extract, no reward and no cache entry, and is not
// logged as an evaluation.
func (s *Server) publishTaskCheck(ctx context.Context, t eval.Task) (*bus.Subscription, *apiError) {
	batchID := "tc_" + rand.Text()
	// The subscription outlives the request: it is read in the background.
	sub, err := s.deps.Bus.Subscribe(context.WithoutCancel(ctx), worker.ResultsSubject(batchID))
	if err != nil {
		s.log.Error("subscribe failed", "batch", batchID, "err", err)
		return nil, storeError(err, "the queue")
	}
	opts := s.cfg.defaultOptions() // fits the host, as an evaluation's would
	opts.Timing = false
	job := worker.Job{
		ID: evalID(batchID, 0), BatchID: batchID, Task: t, Options: opts,
		TaskCheck: true, EnqueuedAt: time.Now().UTC(),
	}
	data, err := json.Marshal(job)
	if err != nil {
		sub.Unsubscribe()
		return nil, newError(CodeInternal, "", "encoding the task check: %v", err)
	}
	if err := s.deps.Bus.PublishJob(ctx, worker.Subject(s.deps.TimingMode()), job.ID, data); err != nil {
		sub.Unsubscribe()
		if errors.Is(err, bus.ErrQueueFull) {
			return nil, newError(CodeQueueFull, "", "the evaluation queue is full; retry after %d s", RetryAfter)
		}
		s.log.Error("publish failed", "batch", batchID, "err", err)
		return nil, storeError(err, "the queue")
	}
	return sub, nil
}

// awaitTaskCheck reads the check's verdict from sub (and closes it), for
// at most limit: status correct means the task is valid. ctx ends only
// when the server shuts down.
func (s *Server) awaitTaskCheck(ctx context.Context, sub *bus.Subscription, limit time.Duration) (eval.Verdict, *apiError) {
	defer sub.Unsubscribe()
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		data, err := sub.Next(wctx)
		switch {
		case ctx.Err() != nil:
			return eval.Verdict{}, newError(CodeNotReady, "", "the server shut down before the task check finished; register the task again")
		case wctx.Err() != nil:
			return eval.Verdict{}, newError(CodeWaitTimeout, "", "the task check did not finish within %s", limit)
		case err != nil:
			s.log.Error("receiving the task check failed", "err", err)
			return eval.Verdict{}, newError(CodeInternal, "", "receiving the task check failed")
		}
		var r worker.Result
		if err := json.Unmarshal(data, &r); err != nil {
			s.log.Error("bad result notification", "err", err)
			continue
		}
		v := r.Verdict
		if v.Status != eval.StatusCorrect && v.TaskError == "" {
			// The check could not run at all (no zygote, a worker's last
			// delivery failed): not the task's fault.
			return v, newError(CodeNotReady, "", "the task check could not run: %s", firstLine(v.Feedback))
		}
		return v, nil
	}
}

// taskCheckReason is why a task check refused a task, for the 422 message.
func taskCheckReason(v eval.Verdict) string {
	if v.TaskError != "" {
		return v.TaskError
	}
	return fmt.Sprintf("%s: %s", v.Status, firstLine(v.Feedback))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
