package reward

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// Result is what a reward function makes of one verdict.
type Result struct {
	// Reward is the scalar to optimise. It is 0 when Valid is false.
	Reward float64 `json:"reward"`
	// Valid is false when the verdict says nothing about the candidate
	// (harness_error, task_error, a malformed verdict). Trainers should
	// mask such samples (exclude them from the loss and the group
	// baseline) instead of learning from Reward.
	Valid bool `json:"valid"`
	// Note explains anything a reader of the number could not guess:
	// a speedup scored as 1.0x because it was not comparable, a clipped
	// speedup, a hack, an excluded sample. Empty when there is nothing to say.
	Note string `json:"note,omitempty"`
}

// Func maps a verdict to a reward. Funcs are pure and safe for concurrent use.
type Func func(v eval.Verdict) Result

// Default is the reward function used when a request names none: the one the
// AdaExplore search uses (DESIGN.md).
const Default = "adaexplore"

// ErrUnknown is returned (wrapped) by Lookup for a name it does not know.
var ErrUnknown = errors.New("unknown reward function")

var registry = map[string]Func{
	"adaexplore":       AdaExplore,
	"kevin":            Kevin,
	"kernelgym_tiered": KernelGymTiered,
	"log_speedup":      LogSpeedup,
	"binary":           Binary,
}

// Names lists the registered reward functions, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the reward function called name; "" means Default.
// An unknown name gives an error wrapping ErrUnknown that lists the valid names.
func Lookup(name string) (Func, error) {
	if name == "" {
		name = Default
	}
	if f, ok := registry[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("reward.Lookup: %w %q (valid: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// outcome is what every reward function needs to know about a verdict.
type outcome int

const (
	outExcluded  outcome = iota // not the candidate's doing: mask the sample
	outHack                     // reward_hack status or any hack flag
	outNoCompile                // compile_error, invalid_submission, or compiled == false
	outWrong                    // compiled, then incorrect / crashed / timed out / over a limit
	outCorrect
)

// judged is a classified verdict. speedup is meaningful only for outCorrect:
// the measured ratio, or 1.0 when it was null (and then note says why).
// timeout marks status timeout (with outNoCompile or outWrong):
// kernelgym_tiered scores it apart.
type judged struct {
	out     outcome
	timeout bool
	speedup float64
	note    string
}

// judge classifies v. The order matters: hack flags win over every status,
// because a candidate caught cheating is never excused by a later failure.
func judge(v eval.Verdict) judged {
	if v.Status == eval.StatusRewardHack || len(v.HackFlags) > 0 {
		note := "reward_hack: no speed reward"
		if len(v.HackFlags) > 0 {
			note = fmt.Sprintf("reward_hack (%s): no speed reward", strings.Join(v.HackFlags, ", "))
		}
		return judged{out: outHack, note: note}
	}
	if v.TaskError != "" {
		return judged{out: outExcluded, note: "task error (not the candidate's): exclude this sample"}
	}
	switch v.Status {
	case eval.StatusHarnessError:
		return judged{out: outExcluded, note: "harness error: exclude this sample"}
	case eval.StatusCompileError, eval.StatusInvalidSubmission:
		return judged{out: outNoCompile}
	case eval.StatusIncorrect, eval.StatusRuntimeError, eval.StatusResourceLimit, eval.StatusTimeout,
		eval.StatusCompileTimeout:
		j := judged{out: outWrong, timeout: v.Status == eval.StatusTimeout || v.Status == eval.StatusCompileTimeout}
		if !v.Compiled {
			j.out = outNoCompile
		}
		return j
	case eval.StatusCorrect:
		return judgeCorrect(v)
	}
	return judged{out: outExcluded, note: fmt.Sprintf("malformed verdict: unknown status %q: exclude this sample", v.Status)}
}

func judgeCorrect(v eval.Verdict) judged {
	if !v.Correct {
		return judged{out: outExcluded, note: "malformed verdict: status correct but correct=false: exclude this sample"}
	}
	if v.Speedup == nil {
		mode := v.TimingMode
		if mode == "" {
			mode = "not timed"
		}
		what := "not measured"
		if mode == eval.TimingCPUInterpreter {
			what = "not comparable"
		}
		return judged{out: outCorrect, speedup: 1, note: fmt.Sprintf("speedup %s (%s): scored as 1.0x", what, mode)}
	}
	s := *v.Speedup
	if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
		return judged{out: outExcluded, note: fmt.Sprintf("malformed verdict: speedup %v: exclude this sample", s)}
	}
	return judged{out: outCorrect, speedup: s}
}

// excluded is the Result for a sample the trainer should mask.
func excluded(j judged) Result { return Result{Reward: 0, Valid: false, Note: j.note} }

// clip bounds j.speedup to [lo, hi] and adds to j.note when it had to.
func clip(j judged, lo, hi float64) (float64, string) {
	switch {
	case j.speedup < lo:
		return lo, joinNote(j.note, fmt.Sprintf("speedup %.4gx clipped to %gx", j.speedup, lo))
	case j.speedup > hi:
		return hi, joinNote(j.note, fmt.Sprintf("speedup %.4gx clipped to %gx", j.speedup, hi))
	}
	return j.speedup, j.note
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
