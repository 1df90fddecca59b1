package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/worker"
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
		var aerr *apiError
		if spec.task, aerr = s.taskByID(ctx, spec.taskID, "task_id"); aerr != nil {
			return nil, aerr
		}
	}
	if spec.taskID == "" {
		if t, ok := s.registeredSource(ctx, spec.task.Source); ok {
			spec.taskID, spec.task = t.ID, t.Harness()
		}
	}
	log := s.log.With("batch", id)
	// Subscribe first: a result announced before we listen would be missed.
	// Nothing is stored under a fresh id yet, so there is nothing to load.
	f, err := s.follow(ctx, id, len(spec.items))
	if err != nil {
		log.Error("subscribe failed", "err", err)
		return nil, storeError(err, "the queue")
	}
	defer f.close()
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
		r, err := f.next(wctx)
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

// accept queues the batch's work (items without code are answered here with
// invalid_submission when the task is registered; identical items are
// evaluated once, dedup.go) and then stores the batch record, which makes
// the batch visible. A batch is queued whole or refused: when an item or the
// record is refused, the jobs queued before it are taken back (rollback.go). A client that
// leaves meanwhile does not stop it halfway: the bus bounds each step.
func (s *Server) accept(ctx context.Context, id string, spec batchSpec) (batchRecord, *apiError) {
	ctx = context.WithoutCancel(ctx)
	log := s.log.With("batch", id)
	now, who := time.Now().UTC(), identityOf(ctx)
	rec := batchRecord{ID: id, Total: len(spec.items), CreatedAt: now, TaskName: spec.task.Name,
		TaskHash: eval.HashSource(spec.task.Source), RewardFn: spec.rewardFn}
	jobs := make([]worker.Job, 0, len(spec.items))
	for i, item := range spec.items {
		job := worker.Job{
			ID: evalID(id, i), BatchID: id, Index: i, Task: spec.task, TaskID: spec.taskID,
			Code: item, Options: spec.options, RewardFn: spec.rewardFn, EnqueuedAt: now,
			RequestID: who.requestID, ClientID: who.clientID, Prompt: spec.promptOf(i),
		}
		if spec.deadline > 0 {
			job.Deadline = now.Add(spec.deadline)
		}
		if spec.fromText {
			text := item
			job.Completion = &text
			code, _, xerr := submission.Extract(item)
			job.Code = code
			// No code: answered here for a registered (checked) task. An inline
			// reference may be broken, which is no fault of the completion's: the
			// harness checks it first (worker.hinted words the verdict).
			if xerr != nil && spec.taskID != "" {
				if err := s.answerInvalid(ctx, job, xerr); err != nil {
					log.Error("publishing an invalid_submission verdict failed", "err", err)
					return rec, storeError(err, "the queue")
				}
				continue
			}
		}
		jobs = append(jobs, job)
	}
	handled := len(spec.items) - len(jobs)
	groups := groupIdentical(jobs, !spec.bypass)
	for i, g := range groups {
		if aerr := s.queueGroup(ctx, log, g, handled, len(spec.items)); aerr != nil {
			s.rollback(ctx, log, groups[:i])
			return rec, aerr
		}
		handled += len(g.jobs)
	}
	data, err := json.Marshal(rec)
	if err == nil {
		err = s.deps.Bus.PutBatch(ctx, id, data)
	}
	if err != nil {
		log.Error("storing the batch record failed", "err", err)
		s.rollback(ctx, log, groups)
		return rec, storeError(err, "the result store")
	}
	return rec, nil
}

// evalID is the id of item i of a batch: its job, its event, its eval_id.
func evalID(batchID string, i int) string { return fmt.Sprintf("%s-%05d", batchID, i) }

// answerInvalid logs and announces the invalid_submission verdict of a
// completion without code, as a worker would for an evaluated one.
func (s *Server) answerInvalid(ctx context.Context, job worker.Job, xerr error) error {
	v := worker.Verdict(s.deps.TimingMode(), job, eval.StatusInvalidSubmission, submission.NoCodeFeedback(xerr), "no_code")
	return worker.PublishResult(ctx, s.deps.Bus, job, worker.Scored(job, v))
}

// canRun refuses a batch whose options require an environment no worker
// here has: its jobs would wait in the queue for one that may never come
// (worker.Route). A worker that joins later makes the same request good.
func (s *Server) canRun(r *eval.Requires) *apiError {
	envs := s.deps.Envs()
	if worker.Satisfies(envs, r) {
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
