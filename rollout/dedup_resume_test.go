package rollout

import (
	"fmt"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

func TestExecSignature(t *testing.T) {
	timed := func(ms float64, code string) eval.Verdict {
		e := 1.234e-6
		return eval.Verdict{Status: eval.StatusCorrect, Compiled: true, TritonLaunches: 2,
			Runtime: &eval.Runtime{MedianMS: ms}, MaxAbsError: &e, CodeHash: eval.HashSource(code)}
	}
	if a, b := execSignature(timed(1.234, "a")), execSignature(timed(1.2449, "b")); a != b {
		t.Errorf("runtimes equal to 2 significant digits differ: %s vs %s", a, b)
	}
	if a, b := execSignature(timed(1.23, "a")), execSignature(timed(1.33, "a")); a == b {
		t.Errorf("different runtimes share a signature %s", a)
	}
	broken := func(code string) eval.Verdict {
		return eval.Verdict{Status: eval.StatusCompileError, CodeHash: eval.HashSource(code)}
	}
	if execSignature(broken("a")) == execSignature(broken("b")) {
		t.Error("two different broken kernels are duplicates: only identical code should be")
	}
}

// Two kernels that run the same (same launches, runtime and error) are both
// recorded, the second marked duplicate, and it is never expanded.
func TestDuplicateNeverExpanded(t *testing.T) {
	llm := &fakeLLM{respond: func(req Request, n int) (string, error) {
		switch req.Purpose {
		case "large":
			// The same speed each time, different code: all duplicates of node 1.
			return fenced(plain(fmt.Sprintf("SPEEDUP=2.0 variant %d", n))), nil
		case "small.tune":
			return edit("# SPEEDUP=2.0", "# SPEEDUP=3.0"), nil
		}
		return "Go faster.", nil
	}}
	cfg := testConfig(PolicyAdaExplore, 12)
	res, steps := run(t, cfg, llm, &fakeEval{}, nil)
	dups := 0
	for _, n := range res.Nodes {
		if n.Duplicate {
			dups++
			if n.ExecSignature != res.Nodes[0].ExecSignature && n.ExecSignature != res.Nodes[2].ExecSignature {
				t.Errorf("node %d duplicate of no earlier node: %s", n.ID, n.ExecSignature)
			}
		}
	}
	if dups == 0 {
		t.Fatalf("no duplicate\n%s", treeString(res.Nodes))
	}
	for _, s := range steps {
		if s.Node > 0 && s.Duplicate != res.Nodes[s.Node-1].Duplicate {
			t.Errorf("step %d's duplicate flag disagrees with its node", s.Node)
		}
	}
	checkInvariants(t, res)
}

// identity is what a resumed tree must reproduce of a node.
type identity struct {
	ID, Parent, Depth        int
	Action, Code, EvalID, By string
	Reward                   float64
	Duplicate                bool
	Status                   eval.Status
}

func identities(nodes []Node) []identity {
	var out []identity
	for _, n := range nodes {
		out = append(out, identity{n.ID, n.Parent, n.Depth, n.Action, n.Code, n.EvalID, n.CreatedBy, n.Reward, n.Duplicate, n.Verdict.Status})
	}
	return out
}

func TestResume(t *testing.T) {
	cfg := testConfig(PolicyAdaExplore, 12)
	first, steps := run(t, cfg, &fakeLLM{respond: story}, &fakeEval{}, nil)
	const k = 6
	nodesInK := 0
	for _, s := range steps[:k] {
		if s.Node > 0 {
			nodesInK++
		}
	}

	resumeFrom := func() (Result, *fakeLLM, *fakeEval) {
		cfg := cfg
		cfg.Resume = steps[:k]
		llm, ev := &fakeLLM{respond: story}, &fakeEval{}
		res, _ := run(t, cfg, llm, ev, nil)
		return res, llm, ev
	}
	a, llmA, evA := resumeFrom()
	b, _, _ := resumeFrom()

	want := identities(first.Nodes[:nodesInK])
	if got := identities(a.Nodes[:nodesInK]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resumed tree differs for the first %d nodes:\n%s\nwant\n%s", nodesInK, treeString(a.Nodes), treeString(first.Nodes))
	}
	if a.Status != StatusDone || a.Steps != 12 {
		t.Errorf("resumed search: status %s, %d steps; want done, 12", a.Status, a.Steps)
	}
	if got, want := len(evA.jobs), len(a.Nodes)-nodesInK; got != want {
		t.Errorf("%d evaluations after resume, want %d (the replayed nodes are not evaluated again)", got, want)
	}
	if len(llmA.calls) > 2*(12-k) {
		t.Errorf("%d LLM calls for %d new steps: replayed steps called the LLM", len(llmA.calls), 12-k)
	}
	if fmt.Sprint(identities(a.Nodes)) != fmt.Sprint(identities(b.Nodes)) {
		t.Error("two resumes from the same steps differ: the reseeded RNG is not deterministic")
	}

	// Resuming a finished search does nothing and gives the same tree.
	cfg.Resume = steps
	llm, ev := &fakeLLM{respond: story}, &fakeEval{}
	done, _ := run(t, cfg, llm, ev, nil)
	same := fmt.Sprint(identities(done.Nodes)) == fmt.Sprint(identities(first.Nodes))
	for i, n := range done.Nodes {
		f := first.Nodes[i]
		same = same && n.Visits == f.Visits && n.TotalReward == f.TotalReward && n.MaxReward == f.MaxReward
	}
	if len(llm.calls)+len(ev.jobs) != 0 || !same || done.Steps != first.Steps {
		t.Errorf("resume of a finished search: %d calls, %d evaluations, %d steps, same tree and statistics %v",
			len(llm.calls), len(ev.jobs), done.Steps, same)
	}
	if done.Best.ID != first.Best.ID || done.TokensIn != first.TokensIn {
		t.Errorf("resumed best %d tokens %d, want %d %d", done.Best.ID, done.TokensIn, first.Best.ID, first.TokensIn)
	}
}

func TestResumeRejectsBadLog(t *testing.T) {
	cfg := testConfig(PolicyAdaExplore, 3)
	cfg.Resume = []Step{{Node: 2, Parent: 0, Verdict: &eval.Verdict{}}}
	if _, err := Run(t.Context(), cfg, Deps{LLM: &fakeLLM{}, Eval: &fakeEval{}, Extract: fakeExtract{}}); err == nil {
		t.Error("a log whose first node is 2 was accepted")
	}
}
