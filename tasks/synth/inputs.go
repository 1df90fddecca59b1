package synth

import (
	"fmt"
	"slices"
	"strings"
)

// ref names a dim inside _inputs: its argument while free (so held-out
// calls can change it), its module constant once pinned.
func ref(d *Dim) string {
	if d.Pinned {
		return d.Name
	}
	return d.arg()
}

// expr is the tensor's torch.randn expression inside _inputs.
func (t *Tensor) expr() string {
	dims := make([]string, len(t.Dims))
	for i, d := range t.Dims {
		dims[i] = ref(d)
	}
	e := fmt.Sprintf("torch.randn(%s, dtype=DTYPE)", strings.Join(dims, ", "))
	if t.Offset > 0 {
		off := slices.Clone(dims)
		for i := t.Offset; i < len(off); i++ {
			off[i] = "1"
		}
		e += fmt.Sprintf(" + torch.randn(%s, dtype=DTYPE)", strings.Join(off, ", "))
	}
	if t.InvSqrt != nil {
		e += fmt.Sprintf(" * %s ** -0.5", ref(t.InvSqrt))
	}
	return e
}

// freeDims are the dims _inputs takes: the free ones, in creation order.
func (s *State) freeDims() []*Dim {
	var free []*Dim
	for _, d := range s.Dims {
		if !d.Pinned && slices.ContainsFunc(s.Inputs, func(t *Tensor) bool { return slices.Contains(t.Dims, d) }) {
			free = append(free, d)
		}
	}
	return free
}

func (s *State) inputNames() []string {
	names := make([]string, len(s.Inputs))
	for i, t := range s.Inputs {
		names[i] = t.Name
	}
	return names
}

func (s *State) inputNumel() int {
	n := 0
	for _, t := range s.Inputs {
		n += numel(t.Dims)
	}
	return n
}

// inputsExpr is the inputs' element count over the module constants.
func (s *State) inputsExpr() string {
	terms := make([]string, len(s.Inputs))
	for i, t := range s.Inputs {
		terms[i] = argList("", t.Dims, func(d *Dim) string { return d.Name })
		terms[i] = strings.ReplaceAll(terms[i], ", ", " * ")
	}
	return strings.Join(terms, " + ")
}

func (s *State) inputsDoc() string {
	docs := make([]string, len(s.Inputs))
	for i, t := range s.Inputs {
		docs[i] = t.Name + " " + shapeDoc(t.Dims)
	}
	return strings.Join(docs, ", ")
}

// shapeDoc writes a shape as Python would: (M, N) or (M,).
func shapeDoc(dims []*Dim) string {
	if len(dims) == 1 {
		return "(" + dims[0].Name + ",)"
	}
	return "(" + argList("", dims, func(d *Dim) string { return d.Name }) + ")"
}

// argList joins first (if any) and f of each dim with ", ".
func argList(first string, dims []*Dim, f func(*Dim) string) string {
	var parts []string
	if first != "" {
		parts = append(parts, first)
	}
	for _, d := range dims {
		parts = append(parts, f(d))
	}
	return strings.Join(parts, ", ")
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = `"` + x + `"`
	}
	return strings.Join(q, ", ")
}
