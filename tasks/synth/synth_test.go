package synth

import (
	"bytes"
	"strings"
	"testing"
)

func TestSameSeedSameBytes(t *testing.T) {
	for _, p := range Presets {
		a, b := GenerateAll(p, 42, 20), GenerateAll(p, 42, 20)
		for i := range a {
			if a[i].File != b[i].File || !bytes.Equal(a[i].Source, b[i].Source) {
				t.Fatalf("%s task %d differs between two runs with seed 42", p.Name, i+1)
			}
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	a, b := GenerateAll(Presets["gpu"], 1, 20), GenerateAll(Presets["gpu"], 2, 20)
	same := 0
	for i := range a {
		if bytes.Equal(a[i].Source, b[i].Source) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of 20 tasks identical for seeds 1 and 2", same)
	}
}

// Task i must not depend on N, its file name included: the same task is
// the same file (and task id) whatever --n made it.
func TestTaskIndependentOfN(t *testing.T) {
	few, many := GenerateAll(Presets["small"], 7, 5), GenerateAll(Presets["small"], 7, 150)
	for i := range few {
		if !bytes.Equal(few[i].Source, many[i].Source) {
			t.Fatalf("task %d differs between --n 5 and --n 150", i+1)
		}
		if many[i].File != few[i].File {
			t.Errorf("task %d: file %q for --n 150, %q for --n 5", i+1, many[i].File, few[i].File)
		}
	}
	for _, tc := range []struct {
		task   Task
		prefix string
	}{{few[0], "1_"}, {many[8], "9_"}, {many[9], "10_"}, {many[149], "150_"}} {
		if !strings.HasPrefix(tc.task.File, tc.prefix) {
			t.Errorf("file %q, want the prefix %q", tc.task.File, tc.prefix)
		}
	}
}

// Over many chains every catalogue op is used, and every chain keeps the
// tracker's invariants (the Python test holds the tracker to the code).
func TestCatalogueCoverageAndInvariants(t *testing.T) {
	used := map[string]int{}
	for _, p := range Presets {
		for i := 1; i <= 500; i++ {
			s := build(p, rng(3, i))
			for _, st := range s.Steps {
				used[st.Op.Name]++
			}
			checkInvariants(t, p, s)
		}
	}
	for _, op := range Catalogue {
		if used[op.Name] == 0 {
			t.Errorf("op %s never drawn in 1000 chains", op.Name)
		}
	}
}

func checkInvariants(t *testing.T, p *Preset, s *State) {
	t.Helper()
	ops := s.Ops()
	where := p.Name + " " + strings.Join(ops, "_")
	if len(ops) < MinOps || len(ops) > MaxOps {
		t.Errorf("%s: %d ops, want %d..%d", where, len(ops), MinOps, MaxOps)
	}
	if s.rank() == 0 || s.Reductions > MaxReductions {
		t.Errorf("%s: rank %d after %d reductions", where, s.rank(), s.Reductions)
	}
	if s.DType == FP32 && ops[0] == "conv" {
		t.Errorf("%s: fp32 conv", where)
	}
	for _, tn := range s.Inputs {
		if n := numel(tn.Dims); n > p.MaxElems {
			t.Errorf("%s: input %s has %d elements, over %d", where, tn.Name, n, p.MaxElems)
		}
	}
	if s.numel() > p.MaxElems || s.FLOPs > p.MaxFLOPs[s.DType.class()] {
		t.Errorf("%s: output %d elements, %.3g FLOPs", where, s.numel(), s.FLOPs)
	}
	for i, st := range s.Steps {
		if i > 0 && st.Op == s.Steps[i-1].Op {
			t.Errorf("%s: %s twice in a row", where, st.Op.Name)
		}
	}
	for _, d := range s.Dims {
		if d.Pinned && !contains(s.Pinned, d) {
			t.Errorf("%s: dim %s pinned but not a constructor argument", where, d.Name)
		}
	}
}

func contains(ds []*Dim, d *Dim) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func TestFileFormat(t *testing.T) {
	task := Generate(Presets["gpu"], 0, 3)
	src := string(task.Source)
	for _, want := range []string{`"""Synthetic: `, "TAGS = [\"synthetic\", \"fused\", \"" + task.DType.String() + `"`,
		"class Model(nn.Module):", "def get_inputs():", "def get_init_inputs():", "def get_held_out_inputs():"} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	if task.File != "3_"+strings.Join(task.Ops, "_")+".py" {
		t.Errorf("file %q for ops %v", task.File, task.Ops)
	}
}
