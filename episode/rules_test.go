package episode

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

func TestOutcome(t *testing.T) {
	fast, slow := 1.3, 0.8
	tests := []struct {
		name       string
		v          eval.Verdict
		turn       int
		wantDone   bool
		wantReason string
	}{
		{"incorrect, turns left", eval.Verdict{Status: eval.StatusIncorrect}, 1, false, ""},
		{"incorrect, last turn", eval.Verdict{Status: eval.StatusIncorrect}, 4, true, DoneMaxTurns},
		{"correct and faster", eval.Verdict{Status: eval.StatusCorrect, Speedup: &fast}, 1, true, DoneSolved},
		{"correct, not timed", eval.Verdict{Status: eval.StatusCorrect}, 2, true, DoneSolved},
		{"correct but slower", eval.Verdict{Status: eval.StatusCorrect, Speedup: &slow}, 2, false, ""},
		{"correct but slower, last turn", eval.Verdict{Status: eval.StatusCorrect, Speedup: &slow}, 4, true, DoneMaxTurns},
		{"task error", eval.Verdict{Status: eval.StatusHarnessError, TaskError: "t.py: degenerate"}, 1, true, DoneTaskError},
		{"harness error", eval.Verdict{Status: eval.StatusHarnessError}, 1, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, reason := Outcome(tt.v, tt.turn, 4)
			if done != tt.wantDone || reason != tt.wantReason {
				t.Errorf("Outcome = %v %q, want %v %q", done, reason, tt.wantDone, tt.wantReason)
			}
		})
	}
}

func TestObservation(t *testing.T) {
	slow := 0.5
	tests := []struct {
		name   string
		v      eval.Verdict
		turn   int
		reason string
		want   []string
		not    []string
	}{
		{"incorrect", eval.Verdict{Status: eval.StatusIncorrect, TrialsTotal: 3, Feedback: "mismatch in trial 0 (seed 0): worst at index 5"},
			1, "", []string{"Turn 1 of 4: incorrect", "0 of 3 trials passed", "mismatch in trial 0", "Fix the problem above", "3 turns left"}, nil},
		{"solved on CPU", eval.Verdict{Status: eval.StatusCorrect, TrialsPassed: 2, TrialsTotal: 2, Feedback: "internal note"},
			2, DoneSolved, []string{"Turn 2 of 4: correct (2 of 2 trials passed; speed not measured here)", "Solved"}, []string{"internal note", "turns left"}},
		{"slower", eval.Verdict{Status: eval.StatusCorrect, Speedup: &slow}, 3, "",
			[]string{"slower than the PyTorch reference (0.50x)", "Make it faster", "1 turn left"}, nil},
		{"hack", eval.Verdict{Status: eval.StatusRewardHack, HackFlags: []string{"cache", "thread"}}, 4, DoneMaxTurns,
			[]string{"reward_hack", "cache, thread", "No turns left"}, nil},
		{"task error", eval.Verdict{Status: eval.StatusHarnessError, TaskError: "ref.py: degenerate reference"}, 1, DoneTaskError,
			[]string{"the task failed: ref.py: degenerate reference", "not your code"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Observation(tt.v, tt.turn, 4, tt.reason)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("observation lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("observation has %q:\n%s", w, got)
				}
			}
		})
	}
}
