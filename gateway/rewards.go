package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/reward"
	"github.com/kernelgate/kernelgate/worker"
)

// rewardResponse is the 200 body of POST /v1/rewards (schema RewardResponse).
type rewardResponse struct {
	BatchID string             `json:"batch_id"`
	Rewards []*float64         `json:"rewards"`
	Results []*harness.Verdict `json:"results"`
}

func (s *Server) rewards(c *gin.Context) {
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	spec, aerr := parseRewardRequest(body, s.cfg)
	if aerr == nil && spec.taskID != "" {
		spec.task, aerr = s.taskByID(c.Request.Context(), spec.taskID, "task_id")
	}
	if aerr != nil {
		abort(c, aerr)
		return
	}
	resp, aerr := s.runBatch(c.Request.Context(), spec)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// runBatch queues one job per item (items without code are answered here with
// invalid_submission) and waits up to spec.wait for every result.
func (s *Server) runBatch(ctx context.Context, spec batchSpec) (rewardResponse, *apiError) {
	batchID := "b_" + rand.Text()
	log := s.log.With("batch", batchID)
	resp := rewardResponse{
		BatchID: batchID,
		Rewards: make([]*float64, len(spec.items)),
		Results: make([]*harness.Verdict, len(spec.items)),
	}
	// Subscribe first: a result published before we listen would be lost.
	sub, err := s.deps.Bus.Subscribe(ctx, worker.ResultsSubject(batchID))
	if err != nil {
		log.Error("subscribe failed", "err", err)
		return resp, newError(CodeInternal, "", "the queue is unavailable")
	}
	defer sub.Unsubscribe()

	now := time.Now().UTC()
	for i, item := range spec.items {
		job := worker.Job{
			ID: evalID(batchID, i), BatchID: batchID, Index: i, Task: spec.task, TaskID: spec.taskID,
			Code: item, Options: spec.options, RewardFn: spec.rewardFn, EnqueuedAt: now,
		}
		if spec.fromText {
			text := item
			job.Completion = &text
			code, _, xerr := submission.Extract(item)
			if xerr != nil {
				job.Code = ""
				if err := s.answerInvalid(ctx, job, xerr); err != nil {
					log.Error("publishing an invalid_submission verdict failed", "err", err)
					return resp, newError(CodeInternal, "", "the queue is unavailable")
				}
				continue
			}
			job.Code = code
		}
		data, err := json.Marshal(job)
		if err != nil {
			return resp, newError(CodeInternal, "", "encoding job %d: %v", i, err)
		}
		if err := s.deps.Bus.PublishJob(ctx, worker.Subject, job.ID, data); err != nil {
			if errors.Is(err, bus.ErrQueueFull) {
				// Jobs queued before this one still run and are logged.
				return resp, newError(CodeQueueFull, "", "the evaluation queue is full (%d of %d items queued); retry after %d s", i, len(spec.items), RetryAfter)
			}
			log.Error("publish failed", "err", err)
			return resp, newError(CodeInternal, "", "the queue is unavailable")
		}
	}
	return resp, s.collect(ctx, sub, spec, &resp)
}

// evalID is the id of item i of a batch: its job, its event, its eval_id.
func evalID(batchID string, i int) string { return fmt.Sprintf("%s-%05d", batchID, i) }

// answerInvalid logs and announces the invalid_submission verdict of a
// completion without code, as a worker would for an evaluated one.
func (s *Server) answerInvalid(ctx context.Context, job worker.Job, xerr error) error {
	v := worker.Verdict(s.deps.TimingMode(), job, harness.StatusInvalidSubmission,
		"no code found: put the Python code of ModelNew in a ```python fenced block ("+xerr.Error()+")", "no_code")
	return worker.PublishResult(ctx, s.deps.Bus, job, resultOf(job, v))
}

// resultOf scores a verdict the gateway made itself (no queue wait, no run).
func resultOf(job worker.Job, v harness.Verdict) worker.Result {
	r := worker.Result{Index: job.Index, ID: job.ID, Verdict: v}
	if f, err := reward.Lookup(job.RewardFn); err == nil {
		res := f(v)
		r.Reward, r.Valid, r.Note = res.Reward, res.Valid, res.Note
	}
	return r
}

// collect fills resp from the batch's results until all are in.
func (s *Server) collect(ctx context.Context, sub *bus.Subscription, spec batchSpec, resp *rewardResponse) *apiError {
	wctx, cancel := context.WithTimeout(ctx, spec.wait)
	defer cancel()
	for left := len(spec.items); left > 0; {
		data, err := sub.Next(wctx)
		if err != nil {
			if ctx.Err() != nil {
				return newError(CodeInternal, "", "request cancelled")
			}
			if wctx.Err() != nil {
				return newError(CodeWaitTimeout, "wait_s", "batch %s: %d of %d results not in after wait_s=%gs; their verdicts are still logged",
					resp.BatchID, left, len(spec.items), spec.wait.Seconds())
			}
			s.log.Error("receiving results failed", "batch", resp.BatchID, "err", err)
			return newError(CodeInternal, "", "receiving results failed")
		}
		var r worker.Result
		if err := json.Unmarshal(data, &r); err != nil || r.Index < 0 || r.Index >= len(spec.items) {
			s.log.Error("bad result notification", "batch", resp.BatchID, "err", err)
			continue
		}
		if resp.Results[r.Index] != nil {
			continue // a redelivered job answered twice
		}
		rew, v := r.Reward, r.Verdict
		resp.Rewards[r.Index], resp.Results[r.Index] = &rew, &v
		left--
	}
	return nil
}
