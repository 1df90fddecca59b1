package ui

import (
	"math"
	"testing"
)

// A batch as a GRPO group: advantages are reward − mean, normalised by the
// population standard deviation; items still running are left out; equal
// rewards have no normalised advantage.
func TestGroupAdvantages(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	g := batchView{Total: 5, Rewards: []*float64{f(1), f(0), nil, f(0), f(1)}}.Group()
	if g.N != 4 || g.Mean != 0.5 || g.Std != 0.5 {
		t.Fatalf("group %+v", g)
	}
	want := []struct{ i, adv, norm float64 }{{0, 0.5, 1}, {1, -0.5, -1}, {3, -0.5, -1}, {4, 0.5, 1}}
	for k, w := range want {
		r := g.Rows[k]
		if float64(r.Index) != w.i || r.Advantage != w.adv || r.Normalised == nil || math.Abs(*r.Normalised-w.norm) > 1e-12 {
			t.Errorf("row %d: %+v, want %+v", k, r, w)
		}
	}
	same := batchView{Total: 2, Rewards: []*float64{f(0.3), f(0.3)}}.Group()
	if same.Std != 0 || same.Rows[0].Normalised != nil || same.Rows[1].Advantage != 0 {
		t.Errorf("equal rewards: %+v", same)
	}
	if none := (batchView{Total: 3, Rewards: make([]*float64, 3)}).Group(); none.N != 0 || none.Rows != nil {
		t.Errorf("nothing in: %+v", none)
	}
	if got := flags(map[string]int{"thread": 1, "decoy": 2, "forge": 0}); got != "decoy 2, thread 1" {
		t.Errorf("flags %q", got)
	}
}
