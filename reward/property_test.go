package reward

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

// speedups is a sorted mix of edges and random values over 1e-4 … 1e4.
func speedups() []float64 {
	s := []float64{math.SmallestNonzeroFloat64, 1e-4, 0.05, 0.0999999, 0.1, 0.1000001, 0.5,
		0.99, 1, 1.01, 1.19999, 1.2, 1.5, 2, 3, 9.99, 10, 10.0001, 50, 1e4, math.MaxFloat64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s = append(s, math.Pow(10, r.Float64()*8-4))
	}
	slices.Sort(s)
	return s
}

// hackVerdicts are cheats in every disguise: any status, compiled or not,
// with a large speedup attached.
func hackVerdicts() []eval.Verdict {
	var out []eval.Verdict
	for _, st := range eval.Statuses {
		for _, flags := range [][]string{nil, {eval.FlagTooFast}, eval.HackFlags} {
			if st != eval.StatusRewardHack && flags == nil {
				continue
			}
			for _, s := range []float64{0.5, 1, 1000} {
				v := correct(s)
				v.Status, v.HackFlags = st, flags
				out = append(out, v)
			}
		}
	}
	return out
}

func TestMonotoneInSpeedup(t *testing.T) {
	for _, name := range Names() {
		f, _ := Lookup(name)
		prev, prevS := math.Inf(-1), 0.0
		for _, s := range speedups() {
			got := f(correct(s))
			if !got.Valid {
				t.Fatalf("%s(%v): not valid: %s", name, s, got.Note)
			}
			if got.Reward < prev {
				t.Errorf("%s: reward(%v) = %v < reward(%v) = %v", name, s, got.Reward, prevS, prev)
			}
			prev, prevS = got.Reward, s
		}
		null := correct(1)
		null.Speedup = nil
		if a, b := f(null).Reward, f(correct(1)).Reward; a != b {
			t.Errorf("%s: null speedup scored %v, 1.0x scored %v", name, a, b)
		}
	}
}

func TestHackNeverPays(t *testing.T) {
	for _, name := range Names() {
		f, _ := Lookup(name)
		minCorrect := math.Inf(1)
		for _, s := range speedups() {
			minCorrect = min(minCorrect, f(correct(s)).Reward)
		}
		noCompile := f(failed(eval.StatusCompileError, false)).Reward
		for _, v := range hackVerdicts() {
			got := f(v)
			if !got.Valid {
				t.Errorf("%s: hack %s %v not valid", name, v.Status, v.HackFlags)
			}
			if got.Reward >= minCorrect {
				t.Errorf("%s: hack %s %v scored %v, a correct kernel can score %v", name, v.Status, v.HackFlags, got.Reward, minCorrect)
			}
			if got.Reward > noCompile {
				t.Errorf("%s: hack %s %v scored %v, more than a kernel that does not compile (%v)", name, v.Status, v.HackFlags, got.Reward, noCompile)
			}
		}
	}
}

// TestCorrectBeatsIncorrect: under every function, every correct kernel,
// however slow, scores strictly more than every kernel that failed.
func TestCorrectBeatsIncorrect(t *testing.T) {
	wrong := []eval.Verdict{
		failed(eval.StatusIncorrect, true), failed(eval.StatusRuntimeError, true),
		failed(eval.StatusResourceLimit, true), failed(eval.StatusTimeout, true),
		failed(eval.StatusCompileError, false), failed(eval.StatusInvalidSubmission, false),
	}
	for _, name := range Names() {
		f, _ := Lookup(name)
		for _, s := range speedups() {
			c := f(correct(s)).Reward
			for _, w := range wrong {
				if r := f(w).Reward; r >= c {
					t.Errorf("%s: %s scored %v, correct %vx scored %v", name, w.Status, r, s, c)
				}
			}
		}
	}
}
