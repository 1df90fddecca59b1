package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Chain lengths, counting every op that emits a line (not the input start).
const (
	MinOps = 2
	MaxOps = 5
)

// tries bounds the redraws of a chain that got stuck short or trivial;
// with this catalogue nearly every first draw is kept.
const tries = 50

// rng is task i's random stream: a PCG seeded by (seed, i), so task i is
// the same whatever the number of tasks generated.
func rng(seed int64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(i)))
}

// build draws one chain: a dtype, a length, then op after op among those
// that fit (never the same op twice in a row).
func build(p *Preset, r *rand.Rand) *State {
	for range tries {
		s := &State{Preset: p, DType: DType(r.IntN(3))}
		want := MinOps + r.IntN(MaxOps-MinOps+1)
		for s.emitted() < want {
			var fit []*Op
			for _, op := range Catalogue {
				if op.Fits(s) && (len(s.Steps) == 0 || op != s.prevOp()) {
					fit = append(fit, op)
				}
			}
			if len(fit) == 0 {
				break
			}
			op := pick(r, fit)
			step := op.Build(s, r)
			step.Op = op
			s.Steps = append(s.Steps, step)
			if step.Line != "" && !s.Val.informative(s.DType) {
				s.Flat = true
			}
		}
		if s.emitted() >= MinOps && s.worthwhile() && !s.Flat {
			return s
		}
	}
	panic(fmt.Sprintf("synth: no valid chain in %d tries", tries))
}

// emitted counts the ops that write a forward line.
func (s *State) emitted() int {
	n := 0
	for _, st := range s.Steps {
		if st.Line != "" {
			n++
		}
	}
	return n
}

// worthwhile rejects chains with nothing for a kernel to do beyond a copy:
// an input start followed only by linear elementwise ops (scale, bias,
// residual) that a kernel could fold into one axpy.
func (s *State) worthwhile() bool {
	return s.Steps[0].Op.GEMM || slices.ContainsFunc(s.Steps, func(st Step) bool { return !st.Op.Linear })
}

// Ops names the chain's ops, for file names and synth.json.
func (s *State) Ops() []string {
	var names []string
	for _, st := range s.Steps {
		if st.Line != "" {
			names = append(names, st.Op.Name)
		}
	}
	return names
}
