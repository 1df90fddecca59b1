package synth

import (
	"fmt"
	"math/rand/v2"
)

// linearOp is nn.Linear: the anchor GEMM on an (M, K) input, or, after a
// nonlinearity, a second layer on the current value (an MLP).
var linearOp = &Op{
	Name: "linear", Tags: []string{"gemm", "matmul"}, Linear: true, GEMM: true,
	Fits: func(s *State) bool {
		if !started(s) {
			return true
		}
		return s.Nonlin && s.rank() >= 2 && len(s.midN()) > 0
	},
	Build: func(s *State, r *rand.Rand) Step {
		var k, n *Dim
		if !started(s) {
			d := s.draw(r, "linear", "M", "K", "N")
			k, n = d[1], d[2]
			s.Inputs = append(s.Inputs, &Tensor{Name: "x", Dims: d[:2], Offset: 1})
			s.Shape = []*Dim{d[0], n}
			s.Val = Val{0, 1}
		} else {
			k, n = s.last(), s.newDim("N", pick(r, s.midN()))
			s.Shape = append(s.Shape[:s.rank()-1:s.rank()-1], n)
			s.Val = Val{0, max(s.Val.mag()/1.5, 0.1)}
		}
		s.pin(k)
		s.pin(n)
		s.FLOPs += 2 * float64(s.numel()) * float64(k.Size)
		attr := s.attr("linear")
		s.Params = append(s.Params, Param{attr, fmt.Sprintf("nn.Linear(%s, %s).to(DTYPE)", k.arg(), n.arg())})
		s.Nonlin, s.NormLast = false, false
		return Step{Line: fmt.Sprintf("x = self.%s(x)", attr), Label: "linear"}
	},
}

// midN are the output sizes a second linear may take within the budgets.
func (s *State) midN() []int {
	var ok []int
	rows := s.numel() / s.last().Size
	for _, n := range s.Preset.MidN[s.DType.class()] {
		flops := s.FLOPs + 2*float64(rows)*float64(s.last().Size)*float64(n)
		if rows*n <= s.Preset.MaxElems && flops <= s.Preset.MaxFLOPs[s.DType.class()] {
			ok = append(ok, n)
		}
	}
	return ok
}

// bmmOp multiplies the (B, M, K) input by a second (B, K, N) input.
var bmmOp = &Op{
	Name: "bmm", Tags: []string{"matmul"}, Linear: true, GEMM: true,
	Fits: func(s *State) bool { return !started(s) },
	Build: func(s *State, r *rand.Rand) Step {
		d := s.draw(r, "bmm", "B", "M", "K", "N")
		b, m, k, n := d[0], d[1], d[2], d[3]
		s.Inputs = append(s.Inputs,
			&Tensor{Name: "x", Dims: []*Dim{b, m, k}, Offset: 2},
			&Tensor{Name: "y", Dims: []*Dim{b, k, n}, InvSqrt: k})
		s.Shape = []*Dim{b, m, n}
		s.Val = Val{0, 1.5}
		s.FLOPs += 2 * float64(s.numel()) * float64(k.Size)
		return Step{Line: "x = torch.bmm(x, y)", Label: "bmm"}
	},
}

// convOp is a 3×3 nn.Conv2d with padding 1. 16-bit only: cuDNN runs fp32
// convolutions in TF32 by default, so an fp32 reference would itself be
// ~1e-3 off an exact kernel.
var convOp = &Op{
	Name: "conv", Tags: []string{"conv"}, Linear: true, GEMM: true,
	Fits: func(s *State) bool { return !started(s) && s.DType != FP32 },
	Build: func(s *State, r *rand.Rand) Step {
		d := s.draw(r, "conv", "N", "C", "C_OUT", "H", "W")
		n, c, cout, h, w := d[0], d[1], d[2], d[3], d[4]
		s.pin(c)
		s.pin(cout)
		s.Inputs = append(s.Inputs, &Tensor{Name: "x", Dims: []*Dim{n, c, h, w}, Offset: 2})
		s.Shape = []*Dim{n, cout, h, w}
		s.Val = Val{0, 1}
		s.FLOPs += 2 * float64(s.numel()) * float64(c.Size*9)
		attr := s.attr("conv")
		s.Params = append(s.Params, Param{attr, fmt.Sprintf("nn.Conv2d(%s, %s, 3, padding=1).to(DTYPE)", c.arg(), cout.arg())})
		return Step{Line: fmt.Sprintf("x = self.%s(x)", attr), Label: "conv2d"}
	},
}

// inputOp starts a memory-bound chain on a plain (M, N) input with
// per-row offsets. It emits no line of its own.
var inputOp = &Op{
	Name: "input", Tags: []string{"memory-bound"}, Linear: true,
	Fits: func(s *State) bool { return !started(s) },
	Build: func(s *State, r *rand.Rand) Step {
		d := s.draw(r, "input", "M", "N")
		s.Inputs = append(s.Inputs, &Tensor{Name: "x", Dims: d, Offset: 1})
		s.Shape = d
		s.Val = Val{0, 1.5}
		return Step{}
	},
}
