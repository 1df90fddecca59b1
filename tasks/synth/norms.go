package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// normable: a last dim wide enough that normalising over it is not trivial.
func normable(s *State) bool { return started(s) && s.last().Size >= 8 }

// layernormOp is nn.LayerNorm over the last dim.
var layernormOp = &Op{
	Name: "layernorm", Tags: []string{"norm"},
	Fits: normable,
	Build: func(s *State, _ *rand.Rand) Step {
		d := s.last()
		s.pin(d)
		attr := s.attr("norm")
		s.Params = append(s.Params, Param{attr, fmt.Sprintf("nn.LayerNorm(%s).to(DTYPE)", d.arg())})
		s.Val, s.Nonlin, s.NormLast = Val{0, 1}, true, true
		return Step{Line: fmt.Sprintf("x = self.%s(x)", attr), Label: "layernorm"}
	},
}

// rmsnormOp is RMSNorm written out, with a learnable weight near 1. In
// fp16 it squares its input, so it needs moderate values.
var rmsnormOp = &Op{
	Name: "rmsnorm", Tags: []string{"norm"},
	Fits: func(s *State) bool { return normable(s) && (s.DType != FP16 || s.Val.mag() <= 16) },
	Build: func(s *State, _ *rand.Rand) Step {
		d := s.last()
		s.pin(d)
		attr := s.attr("rms_weight")
		s.Params = append(s.Params, Param{attr, fmt.Sprintf("nn.Parameter(1.0 + 0.1 * torch.randn(%s, dtype=DTYPE))", d.arg())})
		rms := math.Hypot(s.Val.Mean, s.Val.Spread)
		s.Val, s.Nonlin = Val{s.Val.Mean / rms, s.Val.Spread / rms}, true
		return Step{
			Line:  fmt.Sprintf("x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * self.%s", attr),
			Label: "rmsnorm",
		}
	},
}

// softmaxOp is softmax or log_softmax over the last dim. Softmax is capped
// at SoftmaxWidth (wider rows give probabilities below tolerance) and at
// moderate magnitudes (larger logits give one-hot rows).
func softmaxOp(name string) *Op {
	return &Op{
		Name: name, Tags: []string{"softmax"},
		Fits: func(s *State) bool {
			if !normable(s) {
				return false
			}
			return name == "log_softmax" || (s.last().Size <= SoftmaxWidth[s.DType.class()] && s.Val.Spread <= 8)
		},
		Build: func(s *State, _ *rand.Rand) Step {
			w := float64(s.last().Size)
			if name == "softmax" {
				s.Val = Val{1 / w, min(max(s.Val.Spread, 1), 3) / w}
			} else {
				s.Val.Mean = -math.Log(w) - s.Val.Spread*s.Val.Spread/2
			}
			s.Nonlin, s.NormLast = true, true
			return Step{Line: fmt.Sprintf("x = torch.%s(x, dim=-1)", name), Label: name}
		},
	}
}
