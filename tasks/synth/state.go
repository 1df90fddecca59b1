package synth

import (
	"fmt"
	"strings"
)

// DType is a task's element type; every tensor of a task has it.
type DType int

const (
	FP32 DType = iota
	FP16
	BF16
)

var dtypes = [...]struct{ name, torch string }{
	FP32: {"fp32", "torch.float32"},
	FP16: {"fp16", "torch.float16"},
	BF16: {"bf16", "torch.bfloat16"},
}

func (d DType) String() string { return dtypes[d].name }
func (d DType) Torch() string  { return dtypes[d].torch }

// Bytes is the element size.
func (d DType) Bytes() int {
	if d == FP32 {
		return 4
	}
	return 2
}

// class indexes per-precision tables: 0 for fp32, 1 for 16-bit.
func (d DType) class() int {
	if d == FP32 {
		return 0
	}
	return 1
}

// Dim is one named size: a module constant of the emitted file.
type Dim struct {
	Name string // the module constant, e.g. "M"
	Size int
	// Pinned: a parameter's shape depends on it, so held-out inputs keep
	// Size; a free dim takes its held-out size there.
	Pinned bool
}

// arg is the dim's name as a Python argument (of __init__ or _inputs).
func (d *Dim) arg() string { return strings.ToLower(d.Name) }

// heldOut is a free dim's size in get_held_out_inputs: odd, so not a power
// of two, smaller than Size so held-out checks stay cheap, and at least 3
// so a reduced output still has values to compare.
func (d *Dim) heldOut() int {
	if d.Size > 4096 {
		return d.Size/16 | 1
	}
	return max(d.Size/3|1, 3)
}

// Tensor is one input of forward.
type Tensor struct {
	Name string
	Dims []*Dim
	// Offset > 0 adds torch.randn over the first Offset dims (size 1
	// elsewhere): per-row or per-channel offsets make reductions differ
	// from row to row and seed to seed instead of converging to a constant.
	Offset int
	// InvSqrt scales the values by InvSqrt**-0.5 (a bmm operand over a
	// contraction of that size), so the product stays O(1).
	InvSqrt *Dim
}

// Param is one line of __init__: self.Attr = Expr.
type Param struct{ Attr, Expr string }

// Step is one op as applied: its forward line and its docstring words.
type Step struct {
	Op    *Op
	Line  string // e.g. "x = F.gelu(x)"
	Label string // e.g. "gelu", "row sum"
}

// State is a chain under construction: what the next op may assume.
type State struct {
	DType  DType
	Preset *Preset
	Shape  []*Dim // the current value's shape; nil before the anchor
	Val    Val    // what the current values look like (values.go)
	// Flat: some step left values that vary less than the tolerance; the
	// chain is redrawn.
	Flat bool
	// Nonlin: a nonlinearity came after the last GEMM-like op, so a
	// reduction cannot fold into it (sum(x @ W) is a GEMV).
	Nonlin bool
	// NormLast: the last dim was normalised (layernorm, softmax,
	// log_softmax), so a sum, mean or logsumexp over it is a constant.
	NormLast   bool
	Reductions int
	FLOPs      float64

	Dims   []*Dim // every dim, in creation order (the module constants)
	Pinned []*Dim // the pinned dims in pin order: __init__'s arguments
	Inputs []*Tensor
	Params []Param
	Steps  []Step
	names  map[string]int
}

// newDim makes a dim whose name is unique in the task ("N", then "N2").
func (s *State) newDim(name string, size int) *Dim {
	d := &Dim{Name: s.unique(name, "")}
	d.Size = size
	s.Dims = append(s.Dims, d)
	return d
}

// pin makes d a constructor argument.
func (s *State) pin(d *Dim) {
	if !d.Pinned {
		d.Pinned = true
		s.Pinned = append(s.Pinned, d)
	}
}

// unique returns base, or base+sep+2, base+sep+3... if taken.
func (s *State) unique(base, sep string) string {
	if s.names == nil {
		s.names = map[string]int{}
	}
	s.names[base]++
	if n := s.names[base]; n > 1 {
		return fmt.Sprintf("%s%s%d", base, sep, n)
	}
	return base
}

// attr names a parameter attribute uniquely (bias, bias_2).
func (s *State) attr(base string) string { return s.unique("self."+base, "_")[len("self."):] }

func (s *State) last() *Dim  { return s.Shape[len(s.Shape)-1] }
func (s *State) rank() int   { return len(s.Shape) }
func (s *State) numel() int  { return numel(s.Shape) }
func (s *State) prevOp() *Op { return s.Steps[len(s.Steps)-1].Op }

func numel(dims []*Dim) int {
	n := 1
	for _, d := range dims {
		n *= d.Size
	}
	return n
}
