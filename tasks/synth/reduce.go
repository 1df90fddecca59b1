package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// MaxReductions per chain: more would shrink the output to a few numbers.
const MaxReductions = 2

// axis is one way to reduce a value of some rank.
type axis struct {
	dims  []int  // the reduced dims
	last  bool   // includes the last dim
	label string // docstring word
}

// axes lists the reductions for a rank: the last dim always; dim 1 of a
// (B, M, N) value; channels or the H×W plane of an (N, C, H, W) one.
func axes(rank int) []axis {
	switch rank {
	case 2:
		return []axis{{[]int{1}, true, "row"}}
	case 3:
		return []axis{{[]int{2}, true, "row"}, {[]int{1}, false, "column"}}
	case 4:
		return []axis{{[]int{3}, true, "row"}, {[]int{1}, false, "channel"}, {[]int{2, 3}, true, "spatial"}}
	}
	return nil
}

// reduction is sum, mean, amax or logsumexp over one axis, reducing rank.
// It needs a nonlinearity since the last GEMM-like op (else it folds into
// a cheaper GEMM or is the mean of N(0,1) noise: ~0 every seed), and no
// sum, mean or logsumexp over a normalised last dim (a constant).
func reduction(name string) *Op {
	return &Op{
		Name: name, Tags: []string{"reduction"}, Linear: name == "sum" || name == "mean",
		Fits: func(s *State) bool {
			return started(s) && s.Nonlin && s.Reductions < MaxReductions && len(s.reducible(name)) > 0
		},
		Build: func(s *State, r *rand.Rand) Step {
			ax := pick(r, s.reducible(name))
			n := 1
			var idx []string
			for _, d := range ax.dims {
				n *= s.Shape[d].Size
				idx = append(idx, fmt.Sprint(d-s.rank()))
			}
			s.Val = s.Val.reduced(name, n)
			dim := idx[0]
			if len(idx) > 1 {
				dim = "(" + strings.Join(idx, ", ") + ")"
			}
			var keep []*Dim
			for i, d := range s.Shape {
				if !slices.Contains(ax.dims, i) {
					keep = append(keep, d)
				}
			}
			s.Shape = keep
			s.Reductions++
			if ax.last {
				s.NormLast = false
			}
			if name == "amax" || name == "logsumexp" {
				s.Nonlin = true
			}
			call := fmt.Sprintf("x.%s(dim=%s)", name, dim)
			if name == "logsumexp" {
				call = fmt.Sprintf("torch.logsumexp(x, dim=%s)", dim)
			}
			return Step{Line: "x = " + call, Label: ax.label + " " + name}
		},
	}
}

// reducible lists the axes op may reduce now.
func (s *State) reducible(op string) []axis {
	var ok []axis
	for _, ax := range axes(s.rank()) {
		n := 1
		for _, d := range ax.dims {
			n *= s.Shape[d].Size
		}
		switch {
		case n < 8: // a reduction over a handful of values is barely one
		case ax.last && s.NormLast && op != "amax":
		case !s.fitsFP16(s.Val.reduced(op, n)):
		default:
			ok = append(ok, ax)
		}
	}
	return ok
}
