package rollout

import (
	"math"
	"math/rand/v2"
)

// The selection rule, as implemented (DESIGN.md gives the parameters, not
// the formulas; this is our reading of AdaExplore's UCB with an expand arm):
//
// From the root, at each node n with N = n.Visits and k children (duplicates
// included: they were expansions), the arms are
//
//	child c (not a duplicate): value(c) + C·sqrt(ln(N+1) / c.Visits)
//	expand:                    value(n) + C·sqrt(ln(N+1) / (k/ExpandRatio))
//
// where value is the mean reward (Alpha 0) mixed with the max (Alpha 1).
// The expand arm is progressive widening as a bandit arm: a new child is
// expected to be worth what n is worth on average, and each expansion
// counts as 1/ExpandRatio pulls of the arm, so a larger ratio widens more.
// With no children (k = 0) the arm's bonus is infinite: a leaf is always
// expanded. Ties go to the expand arm, then to the older child. Picking a
// child descends into it; picking the expand arm expands n.
func (s *search) selectNode() int {
	t := s.tree
	n := t.root()
	for {
		k := len(n.Children)
		if k == 0 {
			return n.ID
		}
		lnN := math.Log(float64(n.Visits) + 1)
		bestScore := n.value(s.cfg.Alpha) + s.cfg.C*math.Sqrt(lnN/(float64(k)/s.cfg.ExpandRatio))
		next := -1
		for _, id := range n.Children {
			c := t.nodes[id]
			if c.Duplicate || c.Visits == 0 {
				continue
			}
			score := c.value(s.cfg.Alpha) + s.cfg.C*math.Sqrt(lnN/float64(c.Visits))
			if score > bestScore {
				bestScore, next = score, id
			}
		}
		if next < 0 {
			return n.ID
		}
		n = t.nodes[next]
	}
}

// chooseAction picks the adaexplore action for expanding node id: the root
// and stagnating nodes get a large step; any other node gets one with
// probability PLarge; a correct kernel not yet tuned gets a tune (unless an
// earlier tune found nothing to change in it); the rest a small step.
func chooseAction(t *tree, id int, cfg Config, rng *rand.Rand, untunable map[int]bool) string {
	if id == 0 || stagnating(t, id, cfg.SmallStepLimit) {
		return ActionLarge
	}
	if rng.Float64() < cfg.PLarge {
		return ActionLarge
	}
	if tuneDue(t, id) && !untunable[id] {
		return ActionTune
	}
	return ActionSmall
}

// stagnating: the last `limit` steps of id's chain were small steps (small
// or tune) and none beat the reward of the node they started from.
func stagnating(t *tree, id, limit int) bool {
	n := t.nodes[id]
	best := math.Inf(-1)
	for i := 0; i < limit; i++ {
		if n.Action != ActionSmall && n.Action != ActionTune {
			return false
		}
		best = math.Max(best, n.Reward)
		n = t.nodes[n.Parent]
	}
	return n.ID != 0 && best <= n.Reward
}

// tuneDue: tune is tried once on each correct kernel (it costs no tokens but
// an evaluation), and again on a kernel made by tune only if that tune
// improved on its parent (hill climbing while it pays).
func tuneDue(t *tree, id int) bool {
	n := t.nodes[id]
	if n.Verdict == nil || !n.Verdict.Correct {
		return false
	}
	for _, c := range n.Children {
		if t.nodes[c].Action == ActionTune {
			return false
		}
	}
	if n.Action == ActionTune {
		return n.Reward > t.nodes[n.Parent].Reward
	}
	return true
}
