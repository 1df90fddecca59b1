package rollout

import (
	"fmt"
	"math"

	"github.com/kernelgate/kernelgate/eval"
)

// Node is one candidate of the tree. Node 0 is the virtual root: the task
// with no code; the root's children have ids from 1, in creation order.
type Node struct {
	ID, Parent    int
	Action        string
	Code          string
	Verdict       *eval.Verdict
	EvalID        string
	Reward        float64
	Visits        int
	TotalReward   float64
	MaxReward     float64
	Depth         int
	CreatedBy     string // the model's name, or "tune"
	ExecSignature string
	// Duplicate: an earlier node has the same ExecSignature; this one is
	// kept for the record but never expanded.
	Duplicate bool
	Children  []int
}

// tree holds the nodes by id (nodes[0] is the virtual root).
type tree struct {
	nodes []*Node
	sigs  map[string]int // execution signature -> first node with it
	best  int            // 0 until a node exists
}

func newTree() *tree {
	return &tree{nodes: []*Node{{ID: 0, Parent: -1}}, sigs: map[string]int{}}
}

func (t *tree) root() *Node { return t.nodes[0] }

// add creates a node under parent, marks it duplicate if its execution
// signature was seen, backs its reward up to the root and updates the best.
func (t *tree) add(parent int, action, code, createdBy, evalID string, v eval.Verdict, r float64) *Node {
	p := t.nodes[parent]
	n := &Node{
		ID: len(t.nodes), Parent: parent, Action: action, Code: code,
		Verdict: &v, EvalID: evalID, Reward: r, Depth: p.Depth + 1,
		CreatedBy: createdBy, ExecSignature: execSignature(v),
	}
	if _, seen := t.sigs[n.ExecSignature]; seen {
		n.Duplicate = true
	} else {
		t.sigs[n.ExecSignature] = n.ID
	}
	t.nodes = append(t.nodes, n)
	p.Children = append(p.Children, n.ID)
	for id := n.ID; id >= 0; id = t.nodes[id].Parent {
		m := t.nodes[id]
		if m.Visits == 0 || r > m.MaxReward {
			m.MaxReward = r
		}
		m.Visits++
		m.TotalReward += r
	}
	if t.best == 0 || better(n, t.nodes[t.best]) {
		t.best = n.ID
	}
	return n
}

// value is a node's worth to UCB: its mean reward (alpha 0) mixed with its
// best (alpha 1).
func (n *Node) value(alpha float64) float64 {
	if n.Visits == 0 {
		return 0
	}
	return (1-alpha)*n.TotalReward/float64(n.Visits) + alpha*n.MaxReward
}

// rank orders kernels by (compiled, correct, speedup) lexicographically. A
// hack ranks as not compiled; a correct kernel without a speedup (the CPU
// interpreter does not time) counts as 1.0x, as the reward does.
func rank(n *Node) (compiled, correct bool, speedup float64) {
	v := n.Verdict
	if v == nil || v.Status == eval.StatusRewardHack || len(v.HackFlags) > 0 {
		return false, false, 0
	}
	speedup = 1
	if v.Speedup != nil {
		speedup = *v.Speedup
	}
	if !v.Correct {
		speedup = 0
	}
	return v.Compiled, v.Correct, speedup
}

// better reports whether a outranks b; ties keep the earlier node.
func better(a, b *Node) bool {
	ac, ak, as := rank(a)
	bc, bk, bs := rank(b)
	if ac != bc {
		return ac
	}
	if ak != bk {
		return ak
	}
	return as > bs
}

// execSignature identifies what a kernel did when run: (status, Triton
// launches, median runtime to 2 significant digits, max abs error to 2).
// Without a runtime (not compiled, or the CPU interpreter, which does not
// time) nearly every candidate would share one signature, so the code's hash
// stands in for the runtime: only identical code is then a duplicate.
func execSignature(v eval.Verdict) string {
	if !v.Compiled || v.Runtime == nil {
		return fmt.Sprintf("%s|code:%s", v.Status, v.CodeHash)
	}
	errS := "-"
	if v.MaxAbsError != nil {
		errS = sig2(*v.MaxAbsError)
	}
	return fmt.Sprintf("%s|%d|%s|%s", v.Status, v.TritonLaunches, sig2(v.Runtime.MedianMS), errS)
}

// sig2 formats x to two significant digits.
func sig2(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("%.1e", x)
}

// chain returns the nodes on the path down to id, at most rounds of them,
// oldest first: a reviser's (or refiner's) context. With sinceLarge it
// starts no higher than the last step that wrote a whole kernel (large,
// sample or refine): what came before belongs to another line of attack.
func (t *tree) chain(id, rounds int, sinceLarge bool) []*Node {
	var out []*Node
	for n := t.nodes[id]; n.ID != 0 && len(out) < rounds; n = t.nodes[n.Parent] {
		out = append(out, n)
		if sinceLarge && n.Action != ActionSmall && n.Action != ActionTune {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// pool returns the best correct kernel of each branch (the subtrees under
// the root), best first, at most k: a large step's diverse examples.
func (t *tree) pool(k int) []*Node {
	bestOf := map[int]*Node{} // branch (root child) -> best correct node
	var order []int
	for _, n := range t.nodes[1:] {
		if n.Verdict == nil || !n.Verdict.Correct {
			continue
		}
		b := n.ID
		for t.nodes[b].Parent != 0 {
			b = t.nodes[b].Parent
		}
		if cur, ok := bestOf[b]; !ok {
			bestOf[b] = n
			order = append(order, b)
		} else if better(n, cur) {
			bestOf[b] = n
		}
	}
	var out []*Node
	for _, b := range order {
		out = append(out, bestOf[b])
	}
	// Insertion sort, best first; ties keep branch order (deterministic).
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && better(out[j], out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if len(out) > k {
		out = out[:k]
	}
	return out
}
