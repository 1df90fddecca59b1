package synth

import (
	"fmt"
	"math/rand/v2"
)

// shapes gives an anchor's choices for each of its dims.
type shapes map[string][]int

// Preset is a size class: the dims each anchor may draw, per precision
// (index 0: fp32, 1: fp16/bf16), and the budgets epilogues must respect.
type Preset struct {
	Name string
	// Anchors maps an anchor ("linear", or "linear/narrow" for the variant
	// whose last dim is narrow enough for a 16-bit softmax) to its shapes.
	Anchors map[string][2]shapes
	// MidN: output features a second (MLP) linear may draw.
	MidN [2][]int
	// MaxFLOPs bounds a chain's FLOPs (a second linear must fit), and
	// MaxElems any one tensor, keeping a task under ~10 ms and 4 GB.
	MaxFLOPs [2]float64
	MaxElems int
}

// SoftmaxWidth is the widest last dim a softmax may normalise: its outputs
// are ~1/width, and below the comparison tolerance (fp32 ~1e-4, 16-bit
// ~1e-2) an all-zeros kernel would pass.
var SoftmaxWidth = [2]int{4096, 64}

// Presets by name. gpu: about 0.1–10 ms of eager PyTorch on an H200
// (GEMMs sized for ~50 TFLOP/s fp32 and ~600 TFLOP/s 16-bit; memory-bound
// chains move 0.2–1 GB). small: every tensor at most 64×256 elements, so
// CI can run the references on CPU in well under a second.
var Presets = map[string]*Preset{
	"gpu": {
		Name: "gpu",
		Anchors: map[string][2]shapes{
			"linear": {
				{"M": {2048, 4096}, "K": {2048}, "N": {1024, 2048}},
				{"M": {8192, 16384}, "K": {2048, 4096}, "N": {2048, 4096}},
			},
			"linear/narrow": {
				{"M": {32768}, "K": {2048}, "N": {256}},
				{"M": {65536}, "K": {2048}, "N": {64}},
			},
			"bmm": {
				{"B": {16}, "M": {2048}, "K": {64, 128}, "N": {1024, 2048}},
				{"B": {32}, "M": {2048}, "K": {64, 128}, "N": {1024, 2048}},
			},
			"bmm/narrow": {
				{"B": {32}, "M": {8192}, "K": {64}, "N": {256}},
				{"B": {64}, "M": {16384}, "K": {64}, "N": {64}},
			},
			"conv": {nil, {"N": {32, 64}, "C": {32, 64}, "C_OUT": {64, 128}, "H": {128}, "W": {128}}},
			"input": {
				{"M": {16384}, "N": {2048, 4096}},
				{"M": {32768}, "N": {2048, 4096}},
			},
			"input/narrow": {
				{"M": {1 << 20}, "N": {64}},
				{"M": {1 << 21}, "N": {64}},
			},
		},
		MidN:     [2][]int{{1024, 2048}, {2048, 4096}},
		MaxFLOPs: [2]float64{4e11, 3e12},
		MaxElems: 1 << 27,
	},
	"small": {
		Name: "small",
		Anchors: map[string][2]shapes{
			"linear":        both(shapes{"M": {32, 64}, "K": {64, 128}, "N": {32, 64, 128}}),
			"linear/narrow": both(shapes{"M": {64}, "K": {64}, "N": {16}}),
			"bmm":           both(shapes{"B": {2, 4}, "M": {16, 32}, "K": {16, 32}, "N": {16, 32, 64}}),
			"bmm/narrow":    both(shapes{"B": {4}, "M": {32}, "K": {16}, "N": {16}}),
			"conv":          {nil, {"N": {2}, "C": {4, 8}, "C_OUT": {8, 16}, "H": {8, 12}, "W": {8, 12, 16}}},
			"input":         both(shapes{"M": {32, 64}, "N": {64, 128, 256}}),
			"input/narrow":  both(shapes{"M": {64}, "N": {32}}),
		},
		MidN:     [2][]int{{32, 64}, {32, 64}},
		MaxFLOPs: [2]float64{1e9, 1e9},
		MaxElems: 64 * 256,
	},
}

func both(s shapes) [2]shapes { return [2]shapes{s, s} }

// PresetNames lists the presets for flag help and errors.
const PresetNames = "small or gpu"

// LookupPreset returns the named preset.
func LookupPreset(name string) (*Preset, error) {
	p, ok := Presets[name]
	if !ok {
		return nil, fmt.Errorf("size %q: want %s", name, PresetNames)
	}
	return p, nil
}

// draw makes the anchor's dims, in the order given, from the preset; a
// quarter of the time from the narrow variant where there is one.
func (s *State) draw(r *rand.Rand, anchor string, names ...string) []*Dim {
	table := s.Preset.Anchors[anchor]
	if narrow, ok := s.Preset.Anchors[anchor+"/narrow"]; ok && r.IntN(4) == 0 {
		table = narrow
	}
	choices := table[s.DType.class()]
	dims := make([]*Dim, len(names))
	for i, n := range names {
		dims[i] = s.newDim(n, pick(r, choices[n]))
	}
	return dims
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }
