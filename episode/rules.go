package episode

import (
	"fmt"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// Why an episode ended (Episode.DoneReason).
const (
	DoneSolved    = "solved"     // correct, and faster than the reference (or not timed)
	DoneMaxTurns  = "max_turns"  // the turn budget is spent
	DoneTaskError = "task_error" // the task itself failed: no completion can help
)

// Outcome says whether the step with verdict v, taken as turn of maxTurns,
// ends the episode, and why. Solved means correct and faster than the
// reference; a correct kernel whose speed was not measured (CPU mode, or
// timing off) counts as solved, since no later turn could show more.
func Outcome(v eval.Verdict, turn, maxTurns int) (done bool, reason string) {
	switch {
	case v.TaskError != "":
		return true, DoneTaskError
	case v.Status == eval.StatusCorrect && (v.Speedup == nil || *v.Speedup > 1):
		return true, DoneSolved
	case turn >= maxTurns:
		return true, DoneMaxTurns
	}
	return false, ""
}

// Observation is the text shown to the policy after a step: a status line,
// the verdict's feedback, and what to do next.
func Observation(v eval.Verdict, turn, maxTurns int, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d of %d: %s.\n", turn, maxTurns, statusLine(v))
	if fb := strings.TrimSpace(v.Feedback); fb != "" && v.Status != eval.StatusCorrect {
		b.WriteString("\n" + fb + "\n")
	}
	switch reason {
	case DoneSolved:
		b.WriteString("\nSolved: the episode is over.\n")
	case DoneTaskError:
		b.WriteString("\nThe task itself is broken, not your code: the episode is over.\n")
	case DoneMaxTurns:
		b.WriteString("\nNo turns left: the episode is over.\n")
	default:
		left := maxTurns - turn
		fmt.Fprintf(&b, "\n%s Reply with the complete revised code of ModelNew in one ```python block (%d turn%s left).\n",
			nextHint(v), left, plural(left))
	}
	return b.String()
}

// statusLine says in a few words what the verdict means.
func statusLine(v eval.Verdict) string {
	switch v.Status {
	case eval.StatusCorrect:
		switch {
		case v.Speedup == nil:
			return fmt.Sprintf("correct (%s; speed not measured here)", trials(v))
		case *v.Speedup > 1:
			return fmt.Sprintf("correct and %.2fx faster than the PyTorch reference", *v.Speedup)
		default:
			return fmt.Sprintf("correct but slower than the PyTorch reference (%.2fx)", *v.Speedup)
		}
	case eval.StatusIncorrect:
		return fmt.Sprintf("incorrect: the output does not match the reference (%s)", trials(v))
	case eval.StatusCompileError:
		return "compile_error: the code did not compile or import"
	case eval.StatusRuntimeError:
		return "runtime_error: the code raised or crashed while running"
	case eval.StatusTimeout:
		return "timeout: the evaluation ran out of time"
	case eval.StatusCompileTimeout:
		return "compile_timeout: loading and compiling the kernel took longer than its compile budget (fewer autotune configs compile faster)"
	case eval.StatusResourceLimit:
		return "resource_limit: the code exceeded a memory, output or process limit"
	case eval.StatusRewardHack:
		return "reward_hack: the anti-cheating checks failed (" + strings.Join(v.HackFlags, ", ") + ")"
	case eval.StatusInvalidSubmission:
		return "invalid_submission: no usable ModelNew code was found"
	case eval.StatusHarnessError:
		if v.TaskError != "" {
			return "harness_error: the task failed: " + v.TaskError
		}
		return "harness_error: the evaluator failed (not a judgement of your code)"
	}
	return string(v.Status)
}

func trials(v eval.Verdict) string {
	return fmt.Sprintf("%d of %d trials passed", v.TrialsPassed, v.TrialsTotal)
}

func nextHint(v eval.Verdict) string {
	switch v.Status {
	case eval.StatusCorrect:
		return "Make it faster while keeping it correct."
	case eval.StatusHarnessError:
		return "Try again."
	}
	return "Fix the problem above."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
