package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/tasks"
)

// openRLHFRequest is OpenRLHF's remote reward model request (its
// --reward.remote_url client posts query, prompts and labels). The rest is
// ours, optional; the stock client passes it in the URL (?reward_fn=...).
type openRLHFRequest struct {
	Query    []string        `json:"query"`   // prompt + response, as the trainer decoded them
	Prompts  []string        `json:"prompts"` // stripped from query when a prefix
	Labels   []string        `json:"labels"`  // a task id, or the reference's source
	RewardFn string          `json:"reward_fn"`
	Options  json.RawMessage `json:"options"`
	// InvalidReward, GroupSize and GroupWaitS: what an invalid sample gets
	// (openrlhf_group.go).
	InvalidReward string   `json:"invalid_reward"`
	GroupSize     *int     `json:"group_size"`
	GroupWaitS    *float64 `json:"group_wait_s"`
	DeadlineS     *float64 `json:"deadline_s"` // as on /v1/rewards: a straggler is stopped, valid false
}

// openRLHFResponse is the shape OpenRLHF reads: rewards for the advantage,
// scores (0..1) for dynamic filtering, extra_logs (one number per sample and
// key) for its logger.
type openRLHFResponse struct {
	Rewards   []float64            `json:"rewards"`
	Scores    []float64            `json:"scores"`
	ExtraLogs map[string][]float64 `json:"extra_logs"`
}

// openRLHF answers POST /openrlhf/reward: items are grouped by label and
// each group goes through runBatch, the /v1/rewards path; answers come back
// in request order. scores is 1 for a correct kernel, else 0; an invalid
// sample gets its group's neutral values (openrlhf_group.go).
func (s *Server) openRLHF(c *gin.Context) {
	var req openRLHFRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	groups, base, aerr := s.parseOpenRLHF(c, req)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	policy, aerr := s.parseInvalidPolicy(c, req)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	samples := sampleGroups(req)
	if policy.mode == invalidNeutral && policy.size > 0 {
		// Joined on arrival, before evaluating: a group is the first
		// group_size samples of its prompt to arrive, whenever each finishes.
		scope := groupScope(ctx, base, policy)
		for _, g := range samples {
			g.key = hashKey(scope, g.key)
			g.shared = s.rlGroups.join(g.key, len(g.indices), policy.size, policy.wait)
		}
	}
	resp, aerr := s.runGroups(ctx, groups, len(req.Query))
	if aerr != nil {
		s.rlGroups.leave(samples)
		abort(c, aerr)
		return
	}
	if policy.mode == invalidNeutral {
		s.neutralize(ctx, &resp, samples)
	}
	c.JSON(http.StatusOK, resp)
}

// labelGroup is the items of one label: one batch.
type labelGroup struct {
	spec    batchSpec
	indices []int // positions in the request
}

// parseOpenRLHF returns the request's batches, one per label, and what they
// share (reward function, options, deadline).
func (s *Server) parseOpenRLHF(c *gin.Context, req openRLHFRequest) ([]*labelGroup, batchSpec, *apiError) {
	var base batchSpec
	n := len(req.Query)
	switch {
	case n == 0:
		return nil, base, newError(CodeInvalidRequest, "query", "query is required: one prompt+response text per sample")
	case n > s.cfg.MaxItems:
		return nil, base, newError(CodeTooManyItems, "query", "%d items in one request; at most %d", n, s.cfg.MaxItems)
	case req.Prompts != nil && len(req.Prompts) != n:
		return nil, base, newError(CodeInvalidRequest, "prompts", "%d prompts for %d queries; give one per query or none", len(req.Prompts), n)
	case req.Labels == nil:
		return nil, base, newError(CodeInvalidRequest, "labels", "labels are required: each names a registered task id or carries the reference source (OpenRLHF --data.label_key)")
	case len(req.Labels) != n:
		return nil, base, newError(CodeInvalidRequest, "labels", "%d labels for %d queries; give one per query", len(req.Labels), n)
	}
	fn := req.RewardFn
	if q := c.Query("reward_fn"); q != "" {
		if fn != "" && fn != q {
			return nil, base, newError(CodeInvalidRequest, "reward_fn", "reward_fn %q in the URL and %q in the body differ", q, fn)
		}
		fn = q
	}
	var aerr *apiError
	if base.rewardFn, aerr = parseRewardFn(fn); aerr != nil {
		return nil, base, aerr
	}
	raw, aerr := urlOptions(c, req.Options)
	if aerr != nil {
		return nil, base, aerr
	}
	if base.options, aerr = s.cfg.parseOptions(raw); aerr != nil {
		return nil, base, aerr
	}
	deadline, aerr := urlOrBody(c, "deadline_s", req.DeadlineS)
	if aerr != nil {
		return nil, base, aerr
	}
	if deadline != nil {
		if !(*deadline > 0 && *deadline <= maxWaitS) {
			return nil, base, newError(CodeInvalidRequest, "deadline_s", "deadline_s must be in (0, %d] seconds, got %v", maxWaitS, *deadline)
		}
		base.deadline = time.Duration(*deadline * float64(time.Second))
	}
	var groups []*labelGroup
	byLabel := map[string]*labelGroup{}
	for i, label := range req.Labels {
		g := byLabel[label]
		if g == nil {
			field := fmt.Sprintf("labels[%d]", i)
			spec, aerr := s.taskOfLabel(c.Request.Context(), label, field)
			if aerr != nil {
				return nil, base, aerr
			}
			spec.fromText, spec.rewardFn, spec.options, spec.deadline, spec.wait = true, base.rewardFn, base.options, base.deadline, s.cfg.DefaultWait
			g = &labelGroup{spec: spec}
			byLabel[label] = g
			groups = append(groups, g)
		}
		response := req.Query[i]
		if req.Prompts != nil {
			response = strings.TrimPrefix(response, req.Prompts[i])
			g.spec.prompts = append(g.spec.prompts, []event.PromptMessage{{Role: "user", Content: req.Prompts[i]}})
		}
		g.spec.items = append(g.spec.items, response)
		g.indices = append(g.indices, i)
	}
	return groups, base, nil
}

// taskOfLabel resolves a label into a batch spec's task (its id, harness
// form and hash): a registered task id, else a reference's source (it
// defines Model).
func (s *Server) taskOfLabel(ctx context.Context, label, field string) (batchSpec, *apiError) {
	var spec batchSpec
	if trimSpec(label) == "" {
		return spec, newError(CodeInvalidRequest, field, "empty label: give a task id or the reference source")
	}
	if tasks.ValidID(label) == nil {
		t, err := s.deps.Tasks.Get(ctx, label)
		if err == nil {
			spec.taskID, spec.task, spec.taskHash = t.ID, t.Harness(), t.TaskHash
			return spec, nil
		}
		if !errors.Is(err, tasks.ErrNotFound) {
			return spec, s.taskError(err, label, field)
		}
	}
	if strings.Contains(label, "class Model") {
		spec.task, spec.taskHash = inlineTask(label)
		return spec, nil
	}
	return spec, newError(CodeTaskNotFound, field,
		"label %.80q is neither a registered task id (GET /v1/tasks) nor a reference source (class Model ...)", label)
}

// runGroups runs every group's batch at once and puts the answers back in
// request order. The first error wins (the other batches still run and are
// logged).
func (s *Server) runGroups(ctx context.Context, groups []*labelGroup, n int) (openRLHFResponse, *apiError) {
	out := openRLHFResponse{Rewards: make([]float64, n), Scores: make([]float64, n), ExtraLogs: map[string][]float64{}}
	// OpenRLHF averages each key over a step, so a status is a 0/1 column per
	// status (their means are the status rates) and valid says which rewards
	// are the model's doing (0: a harness or task error; reward/README.md).
	logKeys := []string{"correct", "compiled", "speedup", "reward_hack", "valid"}
	for _, st := range eval.Statuses {
		logKeys = append(logKeys, "status_"+string(st))
	}
	for _, k := range logKeys {
		out.ExtraLogs[k] = make([]float64, n)
	}
	var (
		mu    sync.Mutex
		first *apiError
		wg    sync.WaitGroup
	)
	for _, g := range groups {
		wg.Go(func() {
			resp, aerr := s.runBatchToEnd(ctx, g.spec)
			mu.Lock()
			defer mu.Unlock()
			if aerr != nil {
				if first == nil {
					first = aerr
				}
				return
			}
			for j, i := range g.indices {
				v := resp.Results[j]
				out.Rewards[i] = *resp.Rewards[j]
				out.ExtraLogs["correct"][i] = bit(v.Correct)
				out.ExtraLogs["compiled"][i] = bit(v.Compiled)
				out.ExtraLogs["reward_hack"][i] = bit(v.Status == eval.StatusRewardHack)
				out.ExtraLogs["valid"][i] = bit(resp.Valid[j] != nil && *resp.Valid[j])
				if col, ok := out.ExtraLogs["status_"+string(v.Status)]; ok {
					col[i] = 1
				}
				if v.Speedup != nil {
					out.ExtraLogs["speedup"][i] = *v.Speedup
				}
				out.Scores[i] = bit(v.Correct)
			}
		})
	}
	wg.Wait()
	return out, first
}

// urlNumberOptions are the options the URL may carry: OpenRLHF's stock client
// posts only query, prompts and labels, so --reward.remote_url is the one
// place its user can set them (…/openrlhf/reward?reward_fn=binary&timeout_s=60).
var urlNumberOptions = []string{"timeout_s", "seeds", "atol", "rtol", "memory_limit_mb"}

// urlOptions merges the URL's options into the body's; the same option in
// both is an error rather than a silent choice.
func urlOptions(c *gin.Context, body json.RawMessage) (json.RawMessage, *apiError) {
	found := false
	for _, k := range urlNumberOptions {
		_, ok := c.GetQuery(k)
		found = found || ok
	}
	if !found {
		return body, nil
	}
	merged := map[string]any{}
	if len(body) > 0 && string(body) != "null" {
		if err := json.Unmarshal(body, &merged); err != nil {
			return nil, newError(CodeInvalidOptions, "options", "options must be a JSON object: %v", err)
		}
	}
	for _, k := range urlNumberOptions {
		q, ok := c.GetQuery(k)
		if !ok {
			continue
		}
		if _, dup := merged[k]; dup {
			return nil, newError(CodeInvalidRequest, k, "%s is both in the URL and in the body's options; give it once", k)
		}
		var v float64
		if err := json.Unmarshal([]byte(q), &v); err != nil {
			return nil, newError(CodeInvalidRequest, k, "%s=%.40q in the URL is not a number", k, q)
		}
		merged[k] = json.Number(q)
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return nil, newError(CodeInvalidRequest, "options", "options: %v", err)
	}
	return out, nil
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
