package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
)

// An evaluation is a batch of one: its id is a batch id (e_...), it runs
// and is stored like any batch, and only its request and answer differ.

// evaluationRequest is the body of POST /v1/evaluations (schema EvaluationRequest).
type evaluationRequest struct {
	TaskID     *string         `json:"task_id"`
	Reference  *string         `json:"reference"`
	Completion *string         `json:"completion"`
	Code       *string         `json:"code"`
	RewardFn   string          `json:"reward_fn"`
	Options    json.RawMessage `json:"options"`
	WaitS      *float64        `json:"wait_s"`
	DeadlineS  *float64        `json:"deadline_s"`
	Cache      *bool           `json:"cache"`
}

// evaluationResponse is schema Evaluation.
type evaluationResponse struct {
	ID          string        `json:"id"`
	Status      string        `json:"status"`
	Result      *eval.Verdict `json:"result"`
	Reward      *float64      `json:"reward,omitempty"`
	Cached      *bool         `json:"cached,omitempty"`
	Shared      *bool         `json:"shared,omitempty"`
	Valid       *bool         `json:"valid,omitempty"` // false: drop this sample (Batch.valid)
	Note        string        `json:"note,omitempty"`
	QueueWaitMS *float64      `json:"queue_wait_ms,omitempty"`
	ExecMS      *float64      `json:"exec_ms,omitempty"`
	Location    string        `json:"location,omitempty"`
}

func evaluationLocation(id string) string { return "/v1/evaluations/" + id }

// parseEvaluationRequest decodes body and validates it as a one-item reward
// request, so both endpoints accept the same tasks, options and waits.
func parseEvaluationRequest(body []byte, cfg Config) (batchSpec, *apiError) {
	var req evaluationRequest
	if aerr := decodeBody(body, &req); aerr != nil {
		return batchSpec{}, aerr
	}
	rr := rewardRequest{TaskID: req.TaskID, Reference: req.Reference, RewardFn: req.RewardFn,
		Options: req.Options, WaitS: req.WaitS, DeadlineS: req.DeadlineS, Cache: req.Cache}
	switch {
	case req.Completion != nil && req.Code != nil:
		return batchSpec{}, newError(CodeInvalidRequest, "completion", "give completion or code, not both")
	case req.Completion != nil:
		rr.Completions = []string{*req.Completion}
	case req.Code != nil:
		rr.Codes = []string{*req.Code}
	default:
		return batchSpec{}, newError(CodeInvalidRequest, "code", "a candidate is required: give code or completion")
	}
	return validateRewardRequest(rr, cfg)
}

// evaluate is POST /v1/evaluations.
func (s *Server) evaluate(c *gin.Context) {
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	spec, aerr := parseEvaluationRequest(body, s.cfg)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	b, aerr := s.submit(c, "evaluations", newID("e_"), body, spec)
	switch {
	case aerr != nil:
		abort(c, aerr)
	case ctx.Err() != nil: // the client is gone; the evaluation runs on
	default:
		answerEvaluation(c, b, http.StatusAccepted)
	}
}

// getEvaluation is GET /v1/evaluations/{id}.
func (s *Server) getEvaluation(c *gin.Context) {
	b, aerr := s.loadEvaluation(c.Request.Context(), c.Param("id"))
	if aerr != nil {
		abort(c, aerr)
		return
	}
	answerEvaluation(c, b, http.StatusOK)
}

func (s *Server) loadEvaluation(ctx context.Context, id string) (*batchResponse, *apiError) {
	b, aerr := s.loadBatch(ctx, id, CodeEvalNotFound)
	if aerr != nil {
		return nil, aerr
	}
	if b.Total != 1 {
		return nil, newError(CodeEvalNotFound, "id", "%s is a batch of %d items, not an evaluation: GET %s", id, b.Total, batchLocation(id))
	}
	return b, nil
}

// answerEvaluation answers 200 with a finished evaluation, else status
// (202 from POST, 200 from GET) with its Location.
func answerEvaluation(c *gin.Context, b *batchResponse, running int) {
	resp := evaluationResponse{ID: b.BatchID, Status: b.Status}
	r := b.items[0]
	if r == nil {
		resp.Location = evaluationLocation(b.BatchID)
		c.Header("Location", resp.Location)
		c.JSON(running, resp)
		return
	}
	resp.Result, resp.Reward, resp.Cached, resp.Shared = &r.Verdict, &r.Reward, &r.Cached, &r.Shared
	resp.Valid, resp.Note = &r.Valid, r.Note
	if !r.Cached && !r.Shared { // ran nothing of its own
		resp.QueueWaitMS, resp.ExecMS = &r.QueueWaitMS, &r.ExecMS
	}
	c.JSON(http.StatusOK, resp)
}
