package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// unary is an elementwise nonlinearity: expr applies it to x. fits says
// where on the values it is not degenerate; val maps the values.
func unary(name, expr string, fits func(Val) bool, val func(Val) Val) *Op {
	return &Op{
		Name: name, Tags: []string{"activation", "elementwise"},
		Fits: func(s *State) bool { return started(s) && fits(s.Val) },
		Build: func(s *State, _ *rand.Rand) Step {
			s.Val = val(s.Val)
			s.Nonlin = true
			return Step{Line: "x = " + expr, Label: name}
		},
	}
}

// clampOp clips to ±c, with c just past the mean, so that the clamp cuts
// a real fraction of the values on one side or both.
var clampOp = &Op{
	Name: "clamp", Tags: []string{"elementwise"},
	Fits: started,
	Build: func(s *State, r *rand.Rand) Step {
		c := math.Abs(s.Val.Mean) + pick(r, []float64{0.5, 1})*s.Val.Spread
		lim := strconv.FormatFloat(c, 'g', 2, 64)
		s.Val.Spread *= 0.8
		s.Nonlin = true
		return Step{Line: fmt.Sprintf("x = torch.clamp(x, -%s, %s)", lim, lim), Label: "clamp"}
	},
}

var scaleOp = &Op{
	Name: "scale", Tags: []string{"elementwise"}, Linear: true,
	Fits: func(s *State) bool { return started(s) && s.fitsFP16(Val{3 * s.Val.Mean, 3 * s.Val.Spread}) },
	Build: func(s *State, r *rand.Rand) Step {
		c := pick(r, []float64{0.5, 0.25, 1.5, 2, 3})
		s.Val = Val{s.Val.Mean * c, s.Val.Spread * c}
		return Step{Line: "x = x * " + strconv.FormatFloat(c, 'f', -1, 64), Label: "scale"}
	},
}

// biasOp adds a learnable bias over the last dim, or over the channels of
// an (N, C, H, W) value.
var biasOp = &Op{
	Name: "bias", Tags: []string{"elementwise"}, Linear: true,
	Fits: func(s *State) bool { return started(s) && s.rank() >= 2 },
	Build: func(s *State, _ *rand.Rand) Step {
		d, shape := s.last(), s.last().arg()
		if s.rank() == 4 {
			d = s.Shape[1]
			shape = d.arg() + ", 1, 1"
		}
		s.pin(d)
		attr := s.attr("bias")
		s.Params = append(s.Params, Param{attr, fmt.Sprintf("nn.Parameter(0.5 * torch.randn(%s, dtype=DTYPE))", shape)})
		s.Val.Spread = math.Hypot(s.Val.Spread, 0.5)
		return Step{Line: fmt.Sprintf("x = x + self.%s", attr), Label: "bias"}
	},
}

// residualOp adds another input of the current shape.
var residualOp = &Op{
	Name: "residual", Tags: []string{"residual", "elementwise"}, Linear: true,
	Fits: func(s *State) bool { return started(s) && len(s.Inputs) < 4 },
	Build: func(s *State, _ *rand.Rand) Step {
		name := s.unique("r", "")
		s.Inputs = append(s.Inputs, &Tensor{Name: name, Dims: append([]*Dim(nil), s.Shape...)})
		s.Val.Spread = math.Hypot(s.Val.Spread, 1)
		return Step{Line: fmt.Sprintf("x = x + %s", name), Label: "residual add"}
	},
}
