package synth

import "math"

// Val is a rough model of the current values: a typical mean and spread
// (for a GEMM output with per-row offsets: mean 0, spread ~1). It is only
// good to a factor of a few, which is enough to keep ops off the regions
// where they are degenerate: relu of values far below zero is all zeros,
// tanh of values far from zero is ±1, a clamp at bounds no value reaches
// is a copy, and fp16 overflows past 65504.
type Val struct{ Mean, Spread float64 }

// mag bounds |values| typically.
func (v Val) mag() float64 { return math.Abs(v.Mean) + v.Spread }

// relu-like ops (relu, gelu, silu, hardswish, softplus) are near zero on
// values well below zero: they need some of the mass above it.
func (v Val) reluable() bool { return v.Mean > -v.Spread }

func (v Val) relu() Val { return Val{max(v.Mean, 0) + 0.4*v.Spread, 0.6 * v.Spread} }

// saturable: tanh and sigmoid see values around zero, neither flat nor
// saturated.
func (v Val) saturable() bool {
	return math.Abs(v.Mean) < 2*v.Spread && v.Spread <= 8 && v.Spread >= 0.1
}

// informative: the values vary by more than the comparison tolerance, so
// no constant output can pass (the checker rejects near-constant tasks).
func (v Val) informative(d DType) bool {
	tol := 1e-4 // the harness's default rtol by dtype (docs/protocol.md)
	switch d {
	case FP16:
		tol = 1e-2
	case BF16:
		tol = 1.6e-2
	}
	return v.Spread >= tol*(1+math.Abs(v.Mean))
}

// reduced is the model after a reduction over n values. Averaging shrinks
// the row-to-row spread by sqrt(n) unless rows carry offsets that survive
// the chain, which the model cannot tell; it assumes they do not, so a
// mean or logsumexp that may come out near-constant is redrawn (seen: a
// bf16 logsumexp over 256 sigmoid outputs varied by less than its 1e-2
// tolerance and the checker rejected it).
func (v Val) reduced(op string, n int) Val {
	fn := float64(n)
	switch op {
	case "sum":
		return Val{fn * v.Mean, math.Sqrt(fn) * v.Spread}
	case "amax":
		return Val{v.Mean + 2.5*v.Spread, 0.4 * v.Spread}
	case "logsumexp":
		return Val{v.Mean + math.Log(fn) + v.Spread*v.Spread/2, v.Spread / math.Sqrt(fn)}
	}
	return Val{v.Mean, v.Spread / math.Sqrt(fn)}
}
