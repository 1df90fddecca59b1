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
