package synth

import (
	"fmt"
	"slices"
	"strings"
)

// emit writes the task file. Layout follows datasets/level2: docstring,
// imports, size constants, DTYPE, TAGS, MIN_BYTES, Model, inputs.
func (s *State) emit(header string) []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w(`"""%s`, s.Title())
	w("")
	w("%s", header)
	w("Inputs: %s. Output: %s.", s.inputsDoc(), shapeDoc(s.Shape))
	w(`"""`)
	w("import torch")
	w("import torch.nn as nn")
	if s.usesF() {
		w("import torch.nn.functional as F")
	}
	w("")
	names, sizes := make([]string, len(s.Dims)), make([]string, len(s.Dims))
	for i, d := range s.Dims {
		names[i], sizes[i] = d.Name, fmt.Sprint(d.Size)
	}
	w("%s = %s", strings.Join(names, ", "), strings.Join(sizes, ", "))
	w("DTYPE = %s", s.DType.Torch())
	w("TAGS = [%s]", quoteAll(s.Tags()))
	if in := s.inputNumel(); numel(s.Shape)*16 <= in {
		w("# The output is tiny; any implementation must at least read the inputs once.")
		w("MIN_BYTES = (%s) * %d", s.inputsExpr(), s.DType.Bytes())
	}
	w("\n\nclass Model(nn.Module):")
	w("    def __init__(%s):", argList("self", s.Pinned, (*Dim).arg))
	w("        super().__init__()")
	for _, p := range s.Params {
		w("        self.%s = %s", p.Attr, p.Expr)
	}
	w("\n    def forward(%s):", strings.Join(append([]string{"self"}, s.inputNames()...), ", "))
	for _, st := range s.Steps {
		if st.Line != "" {
			w("        %s", st.Line)
		}
	}
	w("        return x")
	free := s.freeDims()
	w("\n\ndef _inputs(%s):", argList("", free, (*Dim).arg))
	w("    return [")
	for _, t := range s.Inputs {
		w("        %s,", t.expr())
	}
	w("    ]")
	w("\n\ndef get_inputs():")
	w("    return _inputs(%s)", argList("", free, func(d *Dim) string { return d.Name }))
	w("\n\ndef get_init_inputs():")
	w("    return [%s]", argList("", s.Pinned, func(d *Dim) string { return d.Name }))
	w("\n\ndef get_held_out_inputs():")
	w("    return [_inputs(%s)]", argList("", free, func(d *Dim) string { return fmt.Sprint(d.heldOut()) }))
	return []byte(b.String())
}

// Title is the docstring's first line, e.g.
// "Synthetic: linear → gelu → row sum (fp16)."
func (s *State) Title() string {
	var labels []string
	for _, st := range s.Steps {
		if st.Line != "" {
			labels = append(labels, st.Label)
		}
	}
	return fmt.Sprintf("Synthetic: %s (%s).", strings.Join(labels, " → "), s.DType)
}

// Tags: synthetic, fused, the dtype, then each op's tags in chain order.
func (s *State) Tags() []string {
	tags := []string{"synthetic", "fused", s.DType.String()}
	linears := 0
	for _, st := range s.Steps {
		for _, t := range st.Op.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		if st.Op == linearOp {
			linears++
		}
	}
	if linears > 1 {
		tags = append(tags, "mlp")
	}
	return tags
}

func (s *State) usesF() bool {
	return slices.ContainsFunc(s.Steps, func(st Step) bool { return strings.Contains(st.Line, "F.") })
}
