package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// What an invalid sample (valid false: a harness or task error, a deadline)
// is given in OpenRLHF's answer. OpenRLHF 0.11.2 has no way to leave a sample
// out: each reward becomes a tensor (torch.tensor([None]) fails the rollout),
// so a masked sample must carry a number that teaches nothing. The group's
// mean does: its group_norm, rloo and dr_grpo advantage is then exactly 0,
// and dynamic filtering, which averages the group's scores, decides as on
// the valid samples alone.
const (
	invalidNeutral = "neutral" // the mean of its group's valid rewards (and scores); 0 when none is valid
	invalidZero    = "zero"    // 0, as the reward function scores it
	invalidNone    = "none"    // refused: OpenRLHF cannot read a null reward
)

// defaultGroupWait is how long an answer waits for the rest of its group
// when group_size is given without group_wait_s: well inside OpenRLHF's
// 180 s per-request client timeout, past which it retries.
const defaultGroupWait = 60 * time.Second

// invalidPolicy is what an OpenRLHF request says about invalid samples.
type invalidPolicy struct {
	mode string
	// size (group_size) is how many samples make a group, counted across
	// requests: OpenRLHF posts each sample alone, so the gateway sees a
	// group only by holding its first answers until the rest are in. 0: the
	// group is what this request holds.
	size int
	wait time.Duration // group_wait_s: how long the first sample's answer waits for the rest
}

func (s *Server) parseInvalidPolicy(c *gin.Context, req openRLHFRequest) (invalidPolicy, *apiError) {
	p := invalidPolicy{mode: req.InvalidReward}
	if q, ok := c.GetQuery("invalid_reward"); ok {
		if p.mode != "" && p.mode != q {
			return p, newError(CodeInvalidRequest, "invalid_reward", "invalid_reward %q in the URL and %q in the body differ", q, p.mode)
		}
		p.mode = q
	}
	switch p.mode {
	case "":
		p.mode = invalidNeutral
	case invalidNeutral, invalidZero:
	case invalidNone:
		return p, newError(CodeInvalidRequest, "invalid_reward", "invalid_reward none: OpenRLHF cannot take a null reward "+
			"(its rollout makes a tensor of every reward and fails on null); use neutral (the group's mean: zero advantage) or zero")
	default:
		return p, newError(CodeInvalidRequest, "invalid_reward", "invalid_reward %.40q: want neutral, zero or none", p.mode)
	}
	size, aerr := urlOrBody(c, "group_size", req.GroupSize)
	if aerr != nil {
		return p, aerr
	}
	wait, aerr := urlOrBody(c, "group_wait_s", req.GroupWaitS)
	if aerr != nil {
		return p, aerr
	}
	if size != nil {
		if !(*size >= 1 && *size <= float64(s.cfg.MaxItems)) || *size != math.Trunc(*size) {
			return p, newError(CodeInvalidRequest, "group_size", "group_size must be a whole number in 1..%d (OpenRLHF's --rollout.n_samples_per_prompt), got %v", s.cfg.MaxItems, *size)
		}
		p.size, p.wait = int(*size), defaultGroupWait
	}
	if wait != nil {
		switch {
		case size == nil:
			return p, newError(CodeInvalidRequest, "group_wait_s", "group_wait_s needs group_size: without it the group is this request")
		case !(*wait > 0 && *wait <= maxWaitS):
			return p, newError(CodeInvalidRequest, "group_wait_s", "group_wait_s must be in (0, %d] seconds, got %v", maxWaitS, *wait)
		}
		p.wait = time.Duration(*wait * float64(time.Second))
	}
	return p, nil
}

// urlOrBody is the number name from the URL's query or the body (nil when
// neither has it); both is fine only when they agree.
func urlOrBody[T int | float64](c *gin.Context, name string, body *T) (*float64, *apiError) {
	var v *float64
	if body != nil {
		f := float64(*body)
		v = &f
	}
	q, ok := c.GetQuery(name)
	if !ok {
		return v, nil
	}
	f, err := strconv.ParseFloat(q, 64)
	if err != nil {
		return nil, newError(CodeInvalidRequest, name, "%s=%.40q in the URL is not a number", name, q)
	}
	if v != nil && *v != f {
		return nil, newError(CodeInvalidRequest, name, "%s %v in the URL and %v in the body differ", name, f, *v)
	}
	return &f, nil
}

// sampleGroup is the items of one request that answer one prompt of one
// task (same label, same prompt): what OpenRLHF's advantage compares.
type sampleGroup struct {
	key     string
	indices []int
	shared  *rlGroup // the group across requests (group_size), or nil
}

// sampleGroups splits a request's items by (label, prompt), in order of
// first appearance.
func sampleGroups(req openRLHFRequest) []*sampleGroup {
	var out []*sampleGroup
	byKey := map[string]*sampleGroup{}
	for i, label := range req.Labels {
		k := label
		if req.Prompts != nil {
			k = hashKey(label, req.Prompts[i])
		}
		g := byKey[k]
		if g == nil {
			g = &sampleGroup{key: k}
			byKey[k] = g
			out = append(out, g)
		}
		g.indices = append(g.indices, i)
	}
	return out
}

// groupScope is what must match, beyond label and prompt, for samples of
// different requests to be one group: the caller and everything that changes
// a reward.
func groupScope(ctx context.Context, spec batchSpec, p invalidPolicy) string {
	opts, _ := json.Marshal(spec.options)
	return hashKey(identityOf(ctx).clientID, spec.rewardFn, string(opts), spec.deadline.String(), strconv.Itoa(p.size), p.wait.String())
}

func hashKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// neutralize gives each invalid item the mean of its group's valid rewards
// and scores: the group of this request, or, with group_size, the one the
// requests of its prompt make together, once it is in (or group_wait_s after
// its first sample). Every group shared is reported to, exactly once, even
// when ctx is done, so no other request waits for this one in vain.
func (s *Server) neutralize(ctx context.Context, out *openRLHFResponse, groups []*sampleGroup) {
	ctx, cancel := s.untilStopping(ctx)
	defer cancel()
	valid := out.ExtraLogs["valid"]
	pools := make([][2][]float64, len(groups))
	for gi, g := range groups {
		for _, i := range g.indices {
			if valid[i] == 1 {
				pools[gi][0] = append(pools[gi][0], out.Rewards[i])
				pools[gi][1] = append(pools[gi][1], out.Scores[i])
			}
		}
		if g.shared != nil {
			s.rlGroups.report(g.shared, len(g.indices), pools[gi][0], pools[gi][1])
		}
	}
	for gi, g := range groups {
		if g.shared != nil {
			pools[gi][0], pools[gi][1] = s.rlGroups.wait(ctx, g.key, g.shared)
		}
		reward, score := mean(pools[gi][0]), mean(pools[gi][1])
		for _, i := range g.indices {
			if valid[i] != 1 {
				out.Rewards[i], out.Scores[i] = reward, score
			}
		}
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// rlGroups holds the OpenRLHF groups still taking samples (group_size), by
// scope, label and prompt. Its zero value is ready.
type rlGroups struct {
	mu   sync.Mutex
	open map[string]*rlGroup
}

// rlGroup is one group across requests. Every field is guarded by rlGroups.mu.
type rlGroup struct {
	size     int
	joined   int // samples that joined; final once it reaches size
	reported int // samples whose verdicts are in (or whose request failed)
	members  int // requests not yet answered
	deadline time.Time
	rewards  []float64 // the valid samples' rewards reported so far
	scores   []float64
	full     chan struct{} // closed once every joined sample reported, size reached
	closed   bool
}

// join adds n samples to the open group of key, or opens one. A group takes
// no more samples once size have joined or its wait is over: a later sample
// starts the next group.
func (t *rlGroups) join(key string, n, size int, wait time.Duration) *rlGroup {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	g := t.open[key]
	if g == nil || !now.Before(g.deadline) {
		g = &rlGroup{size: size, deadline: now.Add(wait), full: make(chan struct{})}
		if t.open == nil {
			t.open = map[string]*rlGroup{}
		}
		t.open[key] = g
	}
	g.joined += n
	g.members++
	if g.joined >= size {
		delete(t.open, key)
	}
	return g
}

// report adds n samples' outcome: the rewards and scores of the valid ones.
func (t *rlGroups) report(g *rlGroup, n int, rewards, scores []float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g.reported += n
	g.rewards = append(g.rewards, rewards...)
	g.scores = append(g.scores, scores...)
	if !g.closed && g.joined >= g.size && g.reported == g.joined {
		g.closed = true
		close(g.full)
	}
}

// wait blocks until g is complete, its wait is over or ctx ends, and
// returns the valid rewards and scores reported by then. The last request
// out of a group that never filled takes it off the table.
func (t *rlGroups) wait(ctx context.Context, key string, g *rlGroup) ([]float64, []float64) {
	timer := time.NewTimer(time.Until(g.deadline))
	defer timer.Stop()
	select {
	case <-g.full:
	case <-timer.C:
	case <-ctx.Done():
	}
	return t.done(key, g)
}

// leave is a failed request's way out of its groups: its samples count as
// reported, with nothing valid, so the others do not wait for them.
func (t *rlGroups) leave(groups []*sampleGroup) {
	for _, g := range groups {
		if g.shared != nil {
			t.report(g.shared, len(g.indices), nil, nil)
			t.done(g.key, g.shared)
		}
	}
}

// done ends one request's membership and returns what g holds by now.
func (t *rlGroups) done(key string, g *rlGroup) ([]float64, []float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g.members--
	if g.members == 0 && t.open[key] == g {
		delete(t.open, key)
	}
	return slices.Clone(g.rewards), slices.Clone(g.scores)
}
