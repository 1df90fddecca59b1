package rollout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// run runs a search with the fakes and collects its steps.
func run(t *testing.T, cfg Config, llm *fakeLLM, ev *fakeEval, sk SkillMemory) (Result, []Step) {
	t.Helper()
	var steps []Step
	deps := Deps{LLM: llm, Eval: ev, Skills: sk, Extract: fakeExtract{}, OnStep: func(s Step) { steps = append(steps, s) }}
	res, err := Run(t.Context(), cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return res, steps
}

// checkInvariants holds for every search: no duplicate was expanded, every
// counted step is in Actions, and Best is the best node.
func checkInvariants(t *testing.T, res Result) {
	t.Helper()
	sum := 0
	for _, n := range res.Actions {
		sum += n
	}
	if sum != res.Steps {
		t.Errorf("actions %v add up to %d, steps %d", res.Actions, sum, res.Steps)
	}
	for _, n := range res.Nodes {
		if n.Parent > 0 && res.Nodes[n.Parent-1].Duplicate {
			t.Errorf("node %d expands duplicate %d\n%s", n.ID, n.Parent, treeString(res.Nodes))
		}
		if res.Best != nil && better(&n, res.Best) {
			t.Errorf("node %d beats best %d", n.ID, res.Best.ID)
		}
	}
}

func TestAdaExploreTakesEveryAction(t *testing.T) {
	llm, ev := &fakeLLM{respond: story}, &fakeEval{}
	res, _ := run(t, testConfig(PolicyAdaExplore, 14), llm, ev, nil)
	for _, a := range []string{ActionLarge, ActionSmall, ActionTune} {
		if res.Actions[a] == 0 {
			t.Errorf("action %s never taken: %v\n%s", a, res.Actions, treeString(res.Nodes))
		}
	}
	if res.Status != StatusDone || res.Steps != 14 || len(ev.jobs) != 14 {
		t.Errorf("status %s, %d steps, %d evaluations; want done, 14, 14", res.Status, res.Steps, len(ev.jobs))
	}
	checkInvariants(t, res)
}

// The scripted story: broken, the same broken code again (a duplicate), a
// fix by a small step, then a faster variant by another small step (the
// kernel has nothing to tune, so the tune due on a correct kernel is
// skipped and logged).
func TestBrokenFixFaster(t *testing.T) {
	llm := &fakeLLM{respond: func(req Request, n int) (string, error) {
		prompt := req.Messages[0].Content
		switch req.Purpose {
		case "large":
			return fenced(plain("BROKEN")), nil
		case "small.tune":
			m := markerRE.FindStringSubmatch(prompt)
			return edit("# "+m[1], "# "+next(m[1])), nil
		}
		return "Fix the NameError: import triton.language as tl.", nil
	}}
	cfg := testConfig(PolicyAdaExplore, 4)
	cfg.PLarge = 0
	res, steps := run(t, cfg, llm, &fakeEval{}, nil)
	type shape struct {
		Parent    int
		Action    string
		Marker    string
		Duplicate bool
	}
	var got []shape
	for _, n := range res.Nodes {
		got = append(got, shape{n.Parent, n.Action, markerRE.FindStringSubmatch(n.Code)[1], n.Duplicate})
	}
	want := []shape{
		{0, "large", "BROKEN", false},
		{0, "large", "BROKEN", true},
		{1, "small", "SPEEDUP=1.5", false},
		{3, "small", "SPEEDUP=2.5", false},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tree:\n%s\ngot  %v\nwant %v", treeString(res.Nodes), got, want)
	}
	if res.Best == nil || res.Best.ID != 4 || *res.Best.Verdict.Speedup != 2.5 {
		t.Errorf("best = %+v, want node 4 at 2.5x", res.Best)
	}
	if len(steps) != 5 || steps[3].Action != ActionTune || steps[3].Error != errNothingToTune || steps[3].Parent != 3 ||
		steps[3].Failure != event.FailureTune || steps[3].CallIDs != nil {
		t.Errorf("want 4 steps and a skipped tune of node 3 fourth; got %d steps, fourth %+v", len(steps), steps[3])
	}
	last := steps[len(steps)-1]
	// A small step lists both its calls, the reviser's then the tuner's.
	if calls := llm.calls; len(calls) != 6 || !slices.Equal(last.CallIDs, []string{"c5", "c6"}) || last.Failure != "" {
		t.Errorf("last step's calls %v (failure %q), want [c5 c6] of %d calls", last.CallIDs, last.Failure, len(calls))
	}
	if last.BestNode != 4 || last.BestSpeedup == nil || *last.BestSpeedup != 2.5 || last.TokensIn != 200 {
		t.Errorf("last step: best %d %v, tokens in %d; want 4, 2.5, 200 (two calls)", last.BestNode, last.BestSpeedup, last.TokensIn)
	}
	if want := "revise:1 tune:1 common:1"; last.PromptVersion != want {
		t.Errorf("prompt version %q, want %q", last.PromptVersion, want)
	}
	checkInvariants(t, res)
}

func TestRefineMakesOneChain(t *testing.T) {
	llm := &fakeLLM{respond: story}
	res, _ := run(t, testConfig(PolicyRefine, 6), llm, &fakeEval{}, nil)
	if len(res.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(res.Nodes))
	}
	for i, n := range res.Nodes {
		if n.Parent != i || n.Depth != i+1 {
			t.Errorf("node %d: parent %d depth %d, want %d %d\n%s", n.ID, n.Parent, n.Depth, i, i+1, treeString(res.Nodes))
		}
	}
	if res.Actions[ActionSample] != 1 || res.Actions[ActionRefine] != 5 {
		t.Errorf("actions %v, want 1 sample then 5 refine", res.Actions)
	}
	if res.Best.ID != 6 { // BROKEN, then 1.5, 2.5, ... 5.5
		t.Errorf("best %d, want the last node\n%s", res.Best.ID, treeString(res.Nodes))
	}
}

func TestSampleMakesOnlyDepthOne(t *testing.T) {
	llm := &fakeLLM{respond: story}
	res, _ := run(t, testConfig(PolicySample, 5), llm, &fakeEval{}, nil)
	for _, n := range res.Nodes {
		if n.Parent != 0 || n.Depth != 1 || n.Action != ActionSample {
			t.Errorf("node %d: parent %d depth %d action %s", n.ID, n.Parent, n.Depth, n.Action)
		}
	}
	if len(res.Nodes) != 5 || res.Actions[ActionSample] != 5 {
		t.Errorf("%d nodes, actions %v; want 5 samples", len(res.Nodes), res.Actions)
	}
	if got := llm.purposes(); len(got) != 5 || slices.ContainsFunc(got, func(p string) bool { return p != "sample" }) {
		t.Errorf("LLM purposes %v, want 5 samples", got)
	}
}

func TestTokenBudgetStops(t *testing.T) {
	cfg := testConfig(PolicySample, 100)
	cfg.TokenBudget = 400 // 150 a call: stops after the third
	res, _ := run(t, cfg, &fakeLLM{respond: story}, &fakeEval{}, nil)
	if res.Status != StatusBudget || res.Steps != 3 || res.TokensIn+res.TokensOut != 450 {
		t.Errorf("status %s, %d steps, %d tokens; want budget, 3, 450", res.Status, res.Steps, res.TokensIn+res.TokensOut)
	}
}

func TestCancelMidCall(t *testing.T) {
	llm := &fakeLLM{block: true}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	var steps []Step
	res, err := Run(ctx, testConfig(PolicyAdaExplore, 10), Deps{LLM: llm, Eval: &fakeEval{}, Extract: fakeExtract{},
		OnStep: func(s Step) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCancelled || time.Since(start) > 2*time.Second || len(steps) != 0 {
		t.Errorf("status %s after %v with %d steps; want cancelled promptly, no step", res.Status, time.Since(start), len(steps))
	}
}

func TestFailedSteps(t *testing.T) {
	llm := &fakeLLM{respond: func(req Request, n int) (string, error) {
		switch {
		case req.Purpose == "large" && n == 0:
			return "I would use a fused kernel here, with shared memory tiles.", nil
		case req.Purpose == "large":
			return fenced(plain("WRONG")), nil
		case req.Purpose == "small.tune":
			return edit("# NOT IN THE CODE", "# SPEEDUP=9"), nil
		}
		return "Compare against the reference.", nil
	}}
	cfg := testConfig(PolicyAdaExplore, 4)
	cfg.PLarge = 0
	res, steps := run(t, cfg, llm, &fakeEval{}, nil)
	if res.Status != StatusDone || len(steps) != 4 {
		t.Fatalf("status %s, %d steps; want done, 4", res.Status, len(steps))
	}
	if s := steps[0]; s.Node != 0 || s.Error != "large: no code in the answer" || s.Completion == "" {
		t.Errorf("prose step: %+v", s)
	}
	var unmatched int
	for _, s := range steps[1:] {
		if s.Action == ActionSmall {
			if s.Node != 0 || !strings.Contains(s.Error, "small.tune: edit 1: search text not found") {
				t.Errorf("unmatched edit step: node %d error %q", s.Node, s.Error)
			}
			unmatched++
		}
	}
	if unmatched == 0 {
		t.Errorf("no small step among %+v", steps)
	}
}

func TestLLMDownFails(t *testing.T) {
	llm := &fakeLLM{respond: func(Request, int) (string, error) { return "", errors.New("401 Unauthorized") }}
	res, steps := run(t, testConfig(PolicyAdaExplore, 50), llm, &fakeEval{}, nil)
	if res.Status != StatusFailed || len(steps) != maxLLMErrors || !strings.Contains(steps[0].Error, "401") {
		t.Errorf("status %s after %d steps (first error %q); want failed after %d", res.Status, len(steps), steps[0].Error, maxLLMErrors)
	}
}

// A budget smaller than the give-up count, spent entirely on LLM errors, is a
// failed search, not a done one: nothing was ever proposed.
func TestLLMDownWithinASmallBudgetFails(t *testing.T) {
	llm := &fakeLLM{respond: func(Request, int) (string, error) { return "", errors.New("connection refused") }}
	res, steps := run(t, testConfig(PolicyAdaExplore, 3), llm, &fakeEval{}, nil)
	if res.Status != StatusFailed || len(steps) != 3 {
		t.Errorf("status %s after %d steps; want failed after 3", res.Status, len(steps))
	}
}

// A search names its task as every other path does: the harness job (and so
// the verdict's task_name) carries the id's last segment, the id itself
// stays the search's task_id.
func TestSearchJobsNameTheTaskByItsName(t *testing.T) {
	llm, ev := &fakeLLM{respond: func(Request, int) (string, error) { return fenced(kernel("OK")), nil }}, &fakeEval{}
	cfg := testConfig(PolicySample, 1)
	cfg.TaskID = "ci/1_add"
	run(t, cfg, llm, ev, nil)
	if len(ev.jobs) != 1 || ev.jobs[0].Task.Name != "1_add" || ev.jobs[0].Task.Path != "/tasks/ci/1_add.py" {
		t.Fatalf("jobs %+v: want one, of task 1_add", ev.jobs)
	}
}

// failingEval is an evaluator that never judges: the harness is down.
type failingEval struct{}

func (failingEval) Evaluate(context.Context, eval.Job) (eval.Verdict, error) {
	return eval.Verdict{}, errors.New("no zygote")
}

// A failed step says what failed, so a reader tells the model's failures
// (an answer without usable code: a negative sample) from the rest, and
// lists the calls it made, a failed call included.
func TestFailedStepsSayWhatFailed(t *testing.T) {
	tests := []struct {
		name    string
		respond func(Request, int) (string, error)
		ev      Evaluator
		failure string
		calls   []string
	}{
		{"prose", func(Request, int) (string, error) { return "I would fuse the add and the ReLU.", nil }, &fakeEval{}, event.FailureAnswer, []string{"c1"}},
		{"llm", func(Request, int) (string, error) { return "", errors.New("503") }, &fakeEval{}, event.FailureLLM, []string{"c1"}},
		{"evaluate", func(Request, int) (string, error) { return fenced(kernel("OK")), nil }, failingEval{}, event.FailureEvaluate, []string{"c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steps []Step
			deps := Deps{LLM: &fakeLLM{respond: tt.respond}, Eval: tt.ev, Extract: fakeExtract{}, OnStep: func(s Step) { steps = append(steps, s) }}
			if _, err := Run(t.Context(), testConfig(PolicySample, 1), deps); err != nil {
				t.Fatal(err)
			}
			if len(steps) != 1 || steps[0].Node != 0 || steps[0].Error == "" || steps[0].Failure != tt.failure || !slices.Equal(steps[0].CallIDs, tt.calls) {
				t.Fatalf("steps %+v: want one failed step, failure %s, calls %v", steps, tt.failure, tt.calls)
			}
		})
	}
}
