package reward

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

func ptr(f float64) *float64 { return &f }

// correct is a GPU-timed correct verdict with speedup s.
func correct(s float64) eval.Verdict {
	return eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true,
		Speedup: ptr(s), TimingMode: eval.TimingGPU}
}

func failed(st eval.Status, compiled bool) eval.Verdict {
	return eval.Verdict{Status: st, Compiled: compiled, TimingMode: eval.TimingGPU}
}

// ada is AdaExplore's correct branch, written out independently.
func ada(s float64) float64 { return 0.4 + 1.2*(s-0.1)/9.9 }

type want struct{ ada, kevin, gym, log, bin float64 }

func TestRewards(t *testing.T) {
	cpu := eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true,
		TimingMode: eval.TimingCPUInterpreter}
	untimed := cpu
	untimed.TimingMode = eval.TimingGPU
	hack := failed(eval.StatusRewardHack, true)
	hack.HackFlags = []string{eval.FlagSideStream}
	flaggedCorrect := correct(5) // inconsistent, but flags must still win
	flaggedCorrect.HackFlags = []string{eval.FlagDecoy, eval.FlagTooFast}
	hackNoFlags := failed(eval.StatusRewardHack, true)
	hackNoFlags.Speedup = ptr(9)
	compileHack := failed(eval.StatusCompileError, false)
	compileHack.HackFlags = []string{eval.FlagEscape}

	tests := []struct {
		name string
		v    eval.Verdict
		w    want
		note string // substring every speed-based function's Note must contain
	}{
		{"correct 0.05x", correct(0.05), want{0.4, 0.35, -0.1, 0.5, 1}, ""},
		{"correct 0.1x", correct(0.1), want{0.4, 0.4, -0.1, 0.5, 1}, ""},
		{"correct 0.5x", correct(0.5), want{ada(0.5), 0.8, -0.1, 1 + 0.5*math.Log10(0.5), 1}, ""},
		{"correct 1x", correct(1), want{ada(1), 1.3, 0.2, 1, 1}, ""},
		{"correct 1.19x", correct(1.19), want{ada(1.19), 1.49, 0.2, 1 + 0.5*math.Log10(1.19), 1}, ""},
		{"correct 1.2x", correct(1.2), want{ada(1.2), 1.5, 0.4, 1 + 0.5*math.Log10(1.2), 1}, ""},
		{"correct 1.5x", correct(1.5), want{ada(1.5), 1.8, 0.6, 1 + 0.5*math.Log10(1.5), 1}, ""},
		{"correct 2x", correct(2), want{ada(2), 2.3, 0.8, 1 + 0.5*math.Log10(2), 1}, ""},
		{"correct 3x", correct(3), want{ada(3), 3.3, 1, 1 + 0.5*math.Log10(3), 1}, ""},
		{"correct 9.99x", correct(9.99), want{ada(9.99), 10.29, 1, 1 + 0.5*math.Log10(9.99), 1}, ""},
		{"correct 10x", correct(10), want{1.6, 10.3, 1, 1.5, 1}, ""},
		{"correct 50x", correct(50), want{1.6, 50.3, 1, 1.5, 1}, ""},
		{"correct, cpu interpreter", cpu, want{ada(1), 1.3, 0.2, 1, 1}, "speedup not comparable (cpu_interpreter): scored as 1.0x"},
		{"correct, gpu untimed", untimed, want{ada(1), 1.3, 0.2, 1, 1}, "speedup not measured (gpu): scored as 1.0x"},
		{"incorrect", failed(eval.StatusIncorrect, true), want{0.05, 0, -0.3, 0, 0}, ""},
		{"runtime error after compile", failed(eval.StatusRuntimeError, true), want{0.05, 0, -0.3, 0, 0}, ""},
		{"runtime error at import", failed(eval.StatusRuntimeError, false), want{0, 0, -0.5, -0.5, 0}, ""},
		{"resource limit", failed(eval.StatusResourceLimit, true), want{0.05, 0, -0.3, 0, 0}, ""},
		{"timeout after compile", failed(eval.StatusTimeout, true), want{0.05, 0, -1, 0, 0}, ""},
		{"timeout before compile", failed(eval.StatusTimeout, false), want{0, 0, -1, -0.5, 0}, ""},
		{"compile budget ran out", failed(eval.StatusCompileTimeout, false), want{0, 0, -1, -0.5, 0}, ""},
		{"compile error", failed(eval.StatusCompileError, false), want{0, 0, -0.5, -0.5, 0}, ""},
		{"compile error, compiled set", failed(eval.StatusCompileError, true), want{0, 0, -0.5, -0.5, 0}, ""},
		{"invalid submission", failed(eval.StatusInvalidSubmission, false), want{0, 0, -0.5, -0.5, 0}, ""},
		{"reward hack", hack, want{0, 0, -1, -1, 0}, "reward_hack (side_stream)"},
		{"reward hack without flags", hackNoFlags, want{0, 0, -1, -1, 0}, "reward_hack"},
		{"flags on a correct status", flaggedCorrect, want{0, 0, -1, -1, 0}, "reward_hack (decoy, too_fast)"},
		{"flags on a compile error", compileHack, want{0, 0, -1, -1, 0}, "reward_hack (escape)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, w := range map[string]float64{
				"adaexplore": tt.w.ada, "kevin": tt.w.kevin, "kernelgym_tiered": tt.w.gym,
				"log_speedup": tt.w.log, "binary": tt.w.bin,
			} {
				f, err := Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				got := f(tt.v)
				if !got.Valid {
					t.Errorf("%s: Valid = false (note %q), want true", name, got.Note)
				}
				if math.Abs(got.Reward-w) > 1e-9 {
					t.Errorf("%s: Reward = %v, want %v (note %q)", name, got.Reward, w, got.Note)
				}
				if tt.note != "" && name != "binary" && !strings.Contains(got.Note, tt.note) {
					t.Errorf("%s: Note = %q, want it to contain %q", name, got.Note, tt.note)
				}
			}
		})
	}
}

// TestClipNotes: the functions that clip the speedup say so.
func TestClipNotes(t *testing.T) {
	for _, f := range []Func{AdaExplore, LogSpeedup} {
		if got := f(correct(0.05)).Note; got != "speedup 0.05x clipped to 0.1x" {
			t.Errorf("0.05x: Note = %q", got)
		}
		if got := f(correct(50)).Note; got != "speedup 50x clipped to 10x" {
			t.Errorf("50x: Note = %q", got)
		}
		if got := f(correct(10)).Note; got != "" {
			t.Errorf("10x: Note = %q, want none", got)
		}
	}
	if got := Kevin(correct(50)).Note; got != "" {
		t.Errorf("kevin does not clip, Note = %q", got)
	}
}

// TestExcluded: verdicts that say nothing about the candidate are masked.
func TestExcluded(t *testing.T) {
	taskErr := failed(eval.StatusHarnessError, false)
	taskErr.TaskError = "reference raises ValueError"
	notCorrect := correct(2)
	notCorrect.Correct = false
	tests := []struct {
		name, note string
		v          eval.Verdict
	}{
		{"harness error", "harness error: exclude this sample", failed(eval.StatusHarnessError, false)},
		{"task error", "task error", taskErr},
		{"unknown status", "unknown status", failed("exploded", true)},
		{"empty status", "unknown status", eval.Verdict{}},
		{"correct but correct=false", "correct=false", notCorrect},
		{"speedup NaN", "speedup NaN", correct(math.NaN())},
		{"speedup +Inf", "speedup +Inf", correct(math.Inf(1))},
		{"speedup -Inf", "speedup -Inf", correct(math.Inf(-1))},
		{"speedup 0", "speedup 0", correct(0)},
		{"speedup negative", "speedup -2", correct(-2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range Names() {
				f, _ := Lookup(name)
				got := f(tt.v)
				if got.Valid || got.Reward != 0 {
					t.Errorf("%s: got %+v, want Valid=false Reward=0", name, got)
				}
				if !strings.Contains(got.Note, tt.note) || !strings.Contains(got.Note, "exclude") {
					t.Errorf("%s: Note = %q, want it to contain %q and say exclude", name, got.Note, tt.note)
				}
			}
		})
	}
}

func TestBinaryIgnoresNullSpeedup(t *testing.T) {
	v := eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true,
		TimingMode: eval.TimingCPUInterpreter}
	if got := Binary(v); got != (Result{Reward: 1, Valid: true}) {
		t.Errorf("Binary = %+v", got)
	}
}

func TestLookup(t *testing.T) {
	want := []string{"adaexplore", "binary", "kernelgym_tiered", "kevin", "log_speedup"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		if f, err := Lookup(n); err != nil || f == nil {
			t.Errorf("Lookup(%q) = %v, %v", n, f, err)
		}
	}
	f, err := Lookup("")
	if err != nil {
		t.Fatalf("Lookup(\"\"): %v", err)
	}
	if got := f(correct(10)).Reward; got != 1.6 {
		t.Errorf("default reward of 10x = %v, want adaexplore's 1.6", got)
	}
	_, err = Lookup("Kevin")
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("Lookup(Kevin) error = %v, want ErrUnknown", err)
	}
	for _, s := range append([]string{`"Kevin"`}, want...) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}
