package rollout

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestFindTuneSites(t *testing.T) {
	code := `
@triton.autotune(configs=[triton.Config({'BLOCK_M': 64, "BLOCK_N": 2048}, num_stages=3, num_warps=8)], key=['n'])
@triton.jit
def k(x, BLOCK: tl.constexpr = 128, BM: tl.constexpr = 32):
    if BLOCK == 128:
        pass
def f():
    BLOCK_SIZE = 256
    MY_BLOCK = 64
    k[grid](x, BLOCK=BLOCK_SIZE, num_warps=4)
    cfg = dict(BN=16, BK=8)
`
	var got []string
	for _, s := range findTuneSites(code) {
		got = append(got, s.name+"="+code[s.start:s.end])
	}
	// BLOCK_N=2048 and BK=8 are out of range; BLOCK == 128 is a comparison;
	// MY_BLOCK is not a launch parameter; BLOCK=BLOCK_SIZE is not a literal.
	want := "BLOCK_M=64 num_stages=3 num_warps=8 BLOCK=128 BM=32 BLOCK_SIZE=256 num_warps=4 BN=16"
	if strings.Join(got, " ") != want {
		t.Errorf("sites\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestNeighbour(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      int
		up     bool
		want   int
		wantOK bool
	}{
		{"BLOCK_SIZE", 128, true, 256, true},
		{"BLOCK_SIZE", 128, false, 64, true},
		{"BLOCK_SIZE", 100, true, 128, true}, // not a power of two: to the nearest one
		{"BLOCK_SIZE", 100, false, 64, true},
		{"BLOCK_SIZE", 1024, true, 0, false},
		{"BLOCK_SIZE", 16, false, 0, false},
		{"num_warps", 16, true, 0, false},
		{"num_warps", 1, false, 0, false},
		{"num_warps", 4, false, 2, true},
		{"num_stages", 3, true, 4, true},
		{"num_stages", 6, true, 0, false},
	} {
		got, ok := neighbour(tc.name, tc.v, tc.up)
		if ok != tc.wantOK || (ok && got != tc.want) {
			t.Errorf("neighbour(%s, %d, up=%v) = %d, %v; want %d, %v", tc.name, tc.v, tc.up, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestTuneCodeDeterministic(t *testing.T) {
	code := kernel("SPEEDUP=1.0")
	a, whatA, okA := tuneCode(code, rand.New(rand.NewPCG(1, 2)))
	b, _, okB := tuneCode(code, rand.New(rand.NewPCG(1, 2)))
	if !okA || !okB || a != b || a == code {
		t.Fatalf("tune not deterministic or no change: %v %v (%v)", okA, okB, whatA)
	}
	if _, _, ok := tuneCode(plain("x"), rand.New(rand.NewPCG(1, 2))); ok {
		t.Error("tuned code with no launch parameter")
	}
}

// A tune step mutates the correct kernel's BLOCK_SIZE or num_warps, and the
// evaluator is handed the mutated code, with no LLM call.
func TestTuneStepEvaluatesMutation(t *testing.T) {
	llm, ev := &fakeLLM{respond: story}, &fakeEval{}
	res, steps := run(t, testConfig(PolicyAdaExplore, 14), llm, ev, nil)
	codes := ev.codes()
	launchRE := regexp.MustCompile(`BLOCK_SIZE = \d+|num_warps=\d+`)
	tunes := 0
	for _, s := range steps {
		if s.Action != ActionTune || s.Node == 0 {
			continue
		}
		tunes++
		parent := res.Nodes[s.Parent-1]
		if s.TokensIn != 0 || s.Model != "tune" || s.Prompt != nil {
			t.Errorf("tune step %d cost tokens or had a prompt: %+v", s.Node, s)
		}
		if !parent.Verdict.Correct {
			t.Errorf("tune of node %d, which is not correct", parent.ID)
		}
		if s.Code == parent.Code || launchRE.ReplaceAllString(s.Code, "") != launchRE.ReplaceAllString(parent.Code, "") {
			t.Errorf("tune of node %d changed more (or other) than launch parameters:\n%s", parent.ID, s.Code)
		}
		if codes[s.Node-1] != s.Code {
			t.Errorf("the evaluator saw other code than tune step %d made", s.Node)
		}
	}
	if tunes == 0 {
		t.Fatalf("no tune step\n%s", treeString(res.Nodes))
	}
	if n := len(llm.calls); n != 2*res.Actions[ActionSmall]+res.Actions[ActionLarge] {
		t.Errorf("%d LLM calls for actions %v: tune must cost none", n, res.Actions)
	}
}
