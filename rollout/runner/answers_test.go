package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/reward"
	"github.com/kernelgate/kernelgate/rollout"
)

// The search reads an answer as the gateway reads the same text sent as a
// completion, on the real harness: a proposal cut off by the token limit
// inside forward is evaluated, and answered invalid_submission (truncated)
// and scored as a compile error, not as the harness's reward_hack (decoy);
// a whole one gives the code, and so the code_hash, that the reward path
// gives for that text.
func TestSearchReadsAnswersAsTheGateway(t *testing.T) {
	sup := realHarness(t)
	honest := repoFile(t, "datasets/solutions/ci/1_add_relu.py")
	inForward := honest[:strings.Index(honest, "        n = x.numel()")]
	cut := "Here is the kernel:\n```python\n" + inForward
	whole := "Here is the kernel:\n```python\n" + honest + "\n\n```\nIt fuses the add and the ReLU.\n"
	srv := llmtest.New(t, llmtest.Truncated(cut).Once(), llmtest.Reply(whole))
	b := openBus(t, t.TempDir())
	m := newManager(t, b, sup, nil, srv.URL())
	defer m.Close()
	opts := eval.DefaultOptions()
	opts.Seeds, opts.Timing = 2, false
	steps := runToEnd(t, m, Request{TaskID: taskID, Policy: rollout.PolicySample, Steps: 2, Seed: 1, Options: &opts}, 3*time.Minute)
	if len(steps) != 2 || steps[0].Verdict == nil || steps[1].Verdict == nil {
		t.Fatalf("steps %+v (errors: %q)", steps, []string{steps[0].Error, steps[len(steps)-1].Error})
	}
	compileError := reward.AdaExplore(eval.Verdict{Status: eval.StatusCompileError}).Reward
	for i, text := range []string{cut, whole} {
		s := steps[i]
		code, _, err := submission.Extract(text)
		if err != nil || s.Code != code || s.Verdict.CodeHash != eval.HashSource(code) {
			t.Errorf("step %d: code %q (hash %s), the reward path's %q (%v)", i, s.Code, s.Verdict.CodeHash, code, err)
		}
	}
	if v := steps[0].Verdict; v.Status != eval.StatusInvalidSubmission || v.ErrorSignature != submission.SignatureTruncated ||
		len(v.HackFlags) != 0 || steps[0].Reward != compileError {
		t.Errorf("cut-off proposal: %s %q flags %v reward %v: %s", v.Status, v.ErrorSignature, v.HackFlags, steps[0].Reward, v.Feedback)
	}
	if v := steps[1].Verdict; v.Status != eval.StatusCorrect {
		t.Errorf("whole proposal: %s: %.300s", v.Status, v.Feedback)
	}
}
