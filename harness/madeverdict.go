package harness

import (
	"fmt"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// feedbackLimit matches the Python side: feedback is meant for an LLM prompt.
const feedbackLimit = 2048

// harnessVerdict is the verdict Go writes itself when no child verdict
// exists (zygote died, backstop kill). It has the same shape as a child's.
func harnessVerdict(status eval.Status, timingMode, feedback, signature string) eval.Verdict {
	if len(feedback) > feedbackLimit {
		feedback = feedback[:feedbackLimit]
	}
	v := eval.Verdict{
		SchemaVersion:  eval.SchemaVersion,
		Status:         status,
		TimingMode:     timingMode,
		Feedback:       feedback,
		ErrorSignature: signature,
	}
	v.Normalize()
	return v
}

// nameTaskFailure fills task_error on a failed task check whose verdict Go
// made itself (backstop kill, dead zygote), as the Python side does for its
// own: a task-check verdict is "correct" or carries a task_error.
func nameTaskFailure(v *eval.Verdict) {
	if v.Status == eval.StatusCorrect || v.TaskError != "" {
		return
	}
	first, _, _ := strings.Cut(strings.TrimSpace(v.Feedback), "\n")
	msg := fmt.Sprintf("the reference failed the task check (%s): %s", v.Status, first)
	if len(msg) > 500 {
		msg = msg[:500]
	}
	v.TaskError = msg
}
