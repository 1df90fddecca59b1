package skills

import (
	"context"
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// seeded is a memory over a store holding hand-made rules.
func seeded(t *testing.T, cfg Config, rules ...Rule) *Memory {
	t.Helper()
	st := NewFileStore(t.TempDir() + "/s.json")
	for _, r := range rules {
		if r.Status == "" {
			r.Status = export.SkillActive
		}
		r.Version = 1
		if err := st.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return New(st, newFakeLLM(), cfg, kgtest.Logger(t))
}

func TestRetrieveRanking(t *testing.T) {
	const s1 = "NameError: name <name> is not defined"
	rules := []Rule{
		{ID: "a", Rule: "You cannot a.", Signature: s1, Hits: 2, Triton: "3.6.0"},
		{ID: "b", Rule: "You cannot b.", Signature: "TypeError: x", Hits: 10, Triton: "3.6.0"},
		{ID: "c", Rule: "You cannot c.", Signature: s1, Hits: 50, Triton: "3.4.0"},
		{ID: "d", Rule: "You cannot d.", Signature: s1, Hits: 100, Triton: "3.6.0", Status: export.SkillRetired},
		{ID: "e", Rule: "You cannot e.", Signature: "ValueError: y", Hits: 5, Triton: "3.4.0"},
		{ID: "f", Rule: "You cannot b.", Signature: "KeyError: z", Hits: 5, Triton: "3.6.1"}, // b's sentence
		{ID: "g", Rule: "You cannot g.", Signature: "NameError: other", Aliases: []string{s1}, Hits: 1, Triton: "3.6.0"},
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		triton string
		sig    string
		k      int
		want   []string
	}{
		{"signature first, toolchain next", "3.6.2", "NameError: name 'tl.foo' is not defined", 10, []string{"a", "g", "c", "b", "e"}},
		{"k cuts", "3.6.2", "NameError: name 'x' is not defined", 2, []string{"a", "g"}},
		{"no signature", "3.6.2", "", 10, []string{"b", "a", "g", "c", "e"}},
		{"unknown toolchain ranks by hits", "", "", 10, []string{"c", "b", "e", "a", "g"}},
		{"k zero", "3.6.2", "", 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := seeded(t, Config{Triton: tt.triton}, rules...)
			sk, err := m.Retrieve(ctx, tt.sig, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sk {
				got = append(got, s.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Retrieve(%q, %d) = %v, want %v", tt.sig, tt.k, got, tt.want)
			}
		})
	}
}

func TestRetrieveUsesObservedToolchain(t *testing.T) {
	m := seeded(t, Config{},
		Rule{ID: "old", Rule: "You cannot old.", Signature: "E: x", Hits: 9, Triton: "3.4.0"},
		Rule{ID: "new", Rule: "You cannot new.", Signature: "E: y", Hits: 1, Triton: "3.6.0"})
	o := passed("p", "code", nil, nil)
	if err := m.Observe(context.Background(), o); err != nil { // env triton 3.6.0
		t.Fatal(err)
	}
	sk, _ := m.Retrieve(context.Background(), "", 2)
	if len(sk) != 2 || sk[0].ID != "new" || sk[0].Rule != "You cannot new." || sk[0].Version != 1 {
		t.Errorf("Retrieve = %+v, want new first", sk)
	}
}
