package dispatch

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
)

// A compile error in a completion whose code was not fenced says how to fence
// it, once; a fenced completion's, or plain code's, does not.
func TestCompileErrorHintForUnfencedCompletions(t *testing.T) {
	unfenced := "Here you go:\nimport torch\nclass ModelNew(torch.nn.Module) pass"
	fenced := "Here you go:\n```python\nimport torch\nclass ModelNew(torch.nn.Module) pass\n```"
	v := eval.Verdict{Status: eval.StatusCompileError, Feedback: "SyntaxError: expected ':' (candidate.py, line 2)"}
	for _, tt := range []struct {
		name       string
		completion *string
		status     eval.Status
		want       bool
	}{
		{"unfenced completion", &unfenced, eval.StatusCompileError, true},
		{"fenced completion", &fenced, eval.StatusCompileError, false},
		{"code, not a completion", nil, eval.StatusCompileError, false},
		{"unfenced, but not a compile error", &unfenced, eval.StatusIncorrect, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := v
			in.Status = tt.status
			r := Scored(Job{Completion: tt.completion}, in)
			again := Scored(Job{Completion: tt.completion}, r.Verdict) // a shared answer is scored again
			if n := strings.Count(again.Verdict.Feedback, submission.TextHint); n != map[bool]int{true: 1, false: 0}[tt.want] {
				t.Fatalf("feedback %q: the hint %d times, want it %v", again.Verdict.Feedback, n, tt.want)
			}
		})
	}
}

// A cut-off completion and one whose fence closed, with the same code, do
// the same work (one cache entry) but share no evaluation in flight: a
// shared answer carries its owner's words, and a truncated answer must not
// reach a whole completion. Completions of one form still share.
func TestShareKeyKeepsCutOffCompletionsApart(t *testing.T) {
	code := "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        y = x + 1"
	job := func(completion, finish string) Job {
		return Job{Job: eval.Job{Task: eval.Task{Source: "src"}, Code: code, Options: eval.DefaultOptions()}, Completion: &completion, FinishReason: finish}
	}
	closed := job("```python\n"+code+"\n```", "")
	closedElsewhere := job("Here it is: ```python\n"+code+"\n``` Hope this helps!", "stop")
	open := job("```python\n"+code, "")
	length := job(code, "length")
	key := func(j Job) string {
		t.Helper()
		k, err := ShareKey(j)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key(closed) != key(closedElsewhere) {
		t.Error("two closed fences around one code share no evaluation")
	}
	keys := map[string]bool{key(closed): true, key(open): true, key(length): true}
	if len(keys) != 3 {
		t.Errorf("closed, open and length completions: %d share keys, want 3", len(keys))
	}
	for _, j := range []Job{open, length} {
		if a, b := mustWorkKey(t, j), mustWorkKey(t, closed); a != b {
			t.Error("a cut-off completion's work key differs: it would miss the cache")
		}
	}
}

func mustWorkKey(t *testing.T, j Job) string {
	t.Helper()
	k, err := WorkKey(j)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A cut-off completion's verdict is worded once, however often it is
// scored again (a shared answer passes Scored again), and its hack flags go.
func TestTruncatedWordedOnce(t *testing.T) {
	cut := "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        y = x + 1"
	v := eval.Verdict{Status: eval.StatusRewardHack, HackFlags: []string{eval.FlagDecoy}, Feedback: "output has type NoneType"}
	job := Job{Completion: &cut, RewardFn: "kernelgym_tiered"}
	r := Scored(job, v)
	again := Scored(job, r.Verdict)
	if again.Verdict.Status != eval.StatusInvalidSubmission || again.Verdict.ErrorSignature != submission.SignatureTruncated ||
		len(again.Verdict.HackFlags) != 0 || again.Reward != -0.5 {
		t.Fatalf("scored twice: %+v", again)
	}
	if n := strings.Count(again.Verdict.Feedback, "cut off"); n != 1 || len(again.Verdict.Warnings) != 1 {
		t.Errorf("worded %d times, %d warnings: %q", n, len(again.Verdict.Warnings), again.Verdict.Feedback)
	}
	if v.HackFlags[0] != eval.FlagDecoy {
		t.Error("the caller's verdict was changed")
	}
}
