package synth

import "math/rand/v2"

// Op is one catalogue entry. Fits is its shape and dtype rule (false: not
// applicable to this state); Build emits its forward line, declares the
// inputs and parameters it needs, and moves the state to its output.
type Op struct {
	Name string   // token in file names and synth.json
	Tags []string // task tags it contributes
	// Linear: a linear map of its input. A reduction needs a nonlinearity
	// after the last linear GEMM-like op, or it folds into a cheaper one.
	Linear bool
	// GEMM: a matmul or convolution, which resets State.Nonlin.
	GEMM  bool
	Fits  func(s *State) bool
	Build func(s *State, r *rand.Rand) Step
}

// Catalogue is every op the generator may use, anchors first. Order
// matters for determinism only: the generator draws among the ops that fit
// in this order.
var Catalogue = []*Op{
	linearOp, bmmOp, convOp, inputOp,
	unary("relu", "torch.relu(x)", Val.reluable, Val.relu),
	unary("gelu", "F.gelu(x)", Val.reluable, Val.relu),
	unary("silu", "F.silu(x)", Val.reluable, Val.relu),
	unary("tanh", "torch.tanh(x)", Val.saturable, func(v Val) Val { return Val{0, min(v.Spread, 0.7)} }),
	unary("sigmoid", "torch.sigmoid(x)", Val.saturable, func(v Val) Val { return Val{0.5, min(v.Spread/4, 0.2)} }),
	unary("softplus", "F.softplus(x)", Val.reluable, func(v Val) Val { return Val{max(v.Mean, 0) + 0.7, 0.6 * v.Spread} }),
	unary("hardswish", "F.hardswish(x)", Val.reluable, Val.relu),
	clampOp, scaleOp, biasOp, residualOp,
	layernormOp, rmsnormOp, softmaxOp("softmax"), softmaxOp("log_softmax"),
	reduction("sum"), reduction("mean"), reduction("amax"), reduction("logsumexp"),
}

// started: the anchor has run (epilogues need a current value).
func started(s *State) bool { return s.Shape != nil }

// fitsFP16: ~8 typical magnitudes stay below fp16's 65504.
func (s *State) fitsFP16(v Val) bool { return s.DType != FP16 || v.mag()*8 < 60000 }
