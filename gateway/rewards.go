package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// rewards is POST /v1/rewards: 200 with the batch when every verdict is in
// within wait_s, else 202 with where to find it.
func (s *Server) rewards(c *gin.Context) {
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	spec, aerr := parseRewardRequest(body, s.cfg)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	resp, aerr := s.submit(c, "rewards", newID("b_"), body, spec)
	switch {
	case aerr != nil:
		abort(c, aerr)
	case ctx.Err() != nil: // the client is gone; the batch runs on
	case resp.complete():
		c.JSON(http.StatusOK, resp)
	default:
		ref := resp.ref()
		c.Header("Location", ref.Location)
		c.JSON(http.StatusAccepted, ref)
	}
}

// runBatch accepts spec as batch id and waits up to spec.wait (less if the
// client leaves or the server shuts down) for its results. A spec naming a
// task_id without its source gets it from the registry here, whichever
// endpoint made it. Once the batch is accepted it is never an error: what is
// not in yet is read later.
func (s *Server) runBatch(ctx context.Context, id string, spec batchSpec) (*batchResponse, *apiError) {
	if aerr := s.canRun(spec.options.Requires); aerr != nil {
		return nil, aerr
	}
	if spec.taskID != "" && spec.task.Source == "" {
		t, aerr := s.taskByID(ctx, spec.taskID, "task_id")
		if aerr != nil {
			return nil, aerr
		}
		spec.task, spec.taskHash = t.Harness(), t.TaskHash
	}
	if spec.taskID == "" {
		if t, ok := s.registeredTask(ctx, spec.taskHash); ok {
			spec.taskID, spec.task, spec.taskHash = t.ID, t.Harness(), t.TaskHash
		}
	}
	log := s.log.With("batch", id)
	// Follow first: a result announced before we listen would be missed.
	// Nothing is stored under a fresh id yet, so there is nothing to load.
	f, err := s.evals.Follow(ctx, id, len(spec.items))
	if err != nil {
		log.Error("subscribe failed", "err", err)
		return nil, submitError(err)
	}
	defer f.Close()
	rec, aerr := s.accept(ctx, id, spec)
	if aerr != nil {
		return nil, aerr
	}
	resp := newBatchResponse(rec)
	if spec.wait == 0 {
		return resp, nil
	}
	wctx, cancel := context.WithTimeout(ctx, spec.wait)
	defer cancel()
	wctx, cancelStop := s.untilStopping(wctx)
	defer cancelStop()
	for !resp.complete() {
		r, err := f.Next(wctx)
		if err != nil {
			if wctx.Err() == nil {
				log.Error("receiving results failed; answering 202", "err", err)
			}
			break
		}
		resp.add(r)
	}
	return resp, nil
}

// runBatchToEnd is runBatch for callers that need every verdict to answer at
// all (an episode step, OpenRLHF's shape): a batch not complete within
// spec.wait is a wait_timeout error naming the batch, whose results stay
// readable at GET /v1/batches/{id}.
func (s *Server) runBatchToEnd(ctx context.Context, spec batchSpec) (*batchResponse, *apiError) {
	resp, aerr := s.runBatch(ctx, newID("b_"), spec)
	if aerr != nil {
		return nil, aerr
	}
	if !resp.complete() {
		return nil, newError(CodeWaitTimeout, "", "batch %s: %d of %d verdicts not in after %gs; they stay readable at GET /v1/batches/%s",
			resp.BatchID, resp.Total-resp.Done, resp.Total, spec.wait.Seconds(), resp.BatchID)
	}
	return resp, nil
}

// accept queues the batch's work and stores its record (dispatch.Submit:
// the result cache, identical items evaluated once, a batch queued whole or
// refused). The task's hash is the one spec carries from where the task
// entered, and goes with the batch to every job; Submit refuses a batch
// without one, before the record is stored.
func (s *Server) accept(ctx context.Context, id string, spec batchSpec) (batchRecord, *apiError) {
	now, who := time.Now().UTC(), identityOf(ctx)
	rec := batchRecord{ID: id, Total: len(spec.items), CreatedAt: now, TaskName: spec.task.Name,
		TaskHash: spec.taskHash, RewardFn: spec.rewardFn}
	data, err := json.Marshal(rec)
	if err != nil {
		return rec, newError(CodeInternal, "", "encoding the batch record: %v", err)
	}
	b := dispatch.Batch{
		ID: id, Task: spec.task, TaskID: spec.taskID, TaskHash: spec.taskHash, Items: make([]dispatch.Item, len(spec.items)),
		Options: spec.options, RewardFn: spec.rewardFn, Share: !spec.bypass,
		RequestID: who.requestID, ClientID: who.clientID, Record: data,
	}
	if spec.deadline > 0 {
		b.Deadline = now.Add(spec.deadline)
	}
	for i, item := range spec.items {
		b.Items[i] = dispatch.Item{Code: item, Prompt: spec.promptOf(i)}
		if spec.fromText {
			b.Items[i].Code, b.Items[i].Completion, b.Items[i].FinishReason = "", &item, spec.finishReasonOf(i)
		}
	}
	return rec, submitError(s.evals.Submit(ctx, b))
}

// submitError is the answer to an error of the evaluation service.
func submitError(err error) *apiError {
	var full *dispatch.QueueFullError
	var store *dispatch.StoreError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &full):
		return newError(CodeQueueFull, "", "%s; retry after %d s", full, RetryAfter)
	case errors.As(err, &store):
		return storeError(store.Err, store.What)
	}
	return newError(CodeInternal, "", "%v", err)
}

// canRun refuses a batch whose options require an environment no worker
// here has: its jobs would wait in the queue for one that may never come
// (dispatch.Route). A worker that joins later makes the same request good.
func (s *Server) canRun(r *eval.Requires) *apiError {
	envs := s.deps.Envs()
	if dispatch.Satisfies(envs, r) {
		return nil
	}
	have := make([]string, 0, len(envs))
	for _, e := range envs {
		have = append(have, fmt.Sprintf("{gpu %q, torch %q, triton %q}", e.GPU, e.Torch, e.Triton))
	}
	if len(have) == 0 {
		have = append(have, "none is up")
	}
	return newError(CodeNotReady, "options.requires", "no worker here can run this batch: it requires gpu %q, torch %q, triton %q; the workers run %s",
		r.GPU, r.Torch, r.Triton, strings.Join(have, ", "))
}
