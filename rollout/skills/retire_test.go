package skills

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout"
)

func TestManualRetire(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo)
	f.observe(t, nameErrors(3)...)
	id := f.rules(t)[0].ID
	ctx := context.Background()
	if err := f.mem.Retire(ctx, id, "wrong on triton 3.6"); err != nil {
		t.Fatal(err)
	}
	r := f.rules(t)[0]
	if r.Active() || r.Status != export.SkillRetired || r.RetiredReason != "manual: wrong on triton 3.6" || r.Version != 2 {
		t.Errorf("retired rule: %+v", r)
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated, ReasonRetiredManual}) {
		t.Errorf("events %v", got)
	}
	if sk, _ := f.mem.Retrieve(ctx, "NameError: name 'x' is not defined", 5); len(sk) != 0 {
		t.Errorf("retired rule retrieved: %+v", sk)
	}
	if err := f.mem.Retire(ctx, id, "again"); !errors.Is(err, ErrRetired) {
		t.Errorf("second retire: %v, want ErrRetired", err)
	}
	if err := f.mem.Retire(ctx, "sk-none", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	// A retired rule no longer covers its signature: failures count anew.
	f.llm.push("skill.extract", "You cannot call tl.foo.")
	f.observe(t, nameErrors(3)...)
	if rs := f.rules(t); len(rs) != 2 || !rs[0].Active() || rs[0].Rule != "You cannot call tl.foo." {
		t.Errorf("after retirement and 3 failures: %+v", rs)
	}
}

func TestPassingKernelThatBreaksRuleRetiresIt(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo+"\nPATTERN: tl\\.foo\\d*\\(")
	f.observe(t, nameErrors(3)...)
	// A correct kernel that does not break the rule changes nothing, nor
	// does a wrong one that breaks it.
	wrong := passed("p0", "y = tl.foo(x)", nil, nil)
	wrong.Verdict.Status, wrong.Verdict.Correct = eval.StatusIncorrect, false
	f.observe(t, passed("p1", "y = tl.exp(x)", nil, nil), wrong)
	if r := f.rules(t)[0]; !r.Active() || r.Version != 1 {
		t.Fatalf("rule changed without a breaking pass: %+v", r)
	}
	f.observe(t, passed("p2", "@triton.jit\ndef k(x):\n    y = tl.foo(x)\n", nil, nil))
	r := f.rules(t)[0]
	if r.Active() || !strings.Contains(r.RetiredReason, "p2") {
		t.Errorf("after a breaking pass: %+v", r)
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated, ReasonRetiredPassed}) {
		t.Errorf("events %v", got)
	}
}

// onOff observes n evaluations in one arm of rule id, pass of them correct.
func onOff(f *fixture, t *testing.T, id string, used bool, n, pass int) {
	t.Helper()
	for i := range n {
		o := passed(fmt.Sprintf("%s-%v-%d", id, used, i), "code", nil, nil)
		if i >= pass {
			o.Verdict.Status, o.Verdict.Correct = eval.StatusIncorrect, false
		}
		if used {
			o.Used = []string{id}
		} else {
			o.Omitted = []string{id}
		}
		f.observe(t, o)
	}
}

func TestOnOffRetiresHarmfulRule(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo, "You cannot index a block with a runtime integer.")
	f.observe(t, nameErrors(3)...)
	for i := range 3 {
		f.observe(t, failure(fmt.Sprintf("i%d", i), "t", "IndexError: index out of range", "c"))
	}
	rs := f.rules(t)
	harmful, fine := rs[0].ID, rs[1].ID
	if rs[0].Rule != ruleFoo {
		harmful, fine = fine, harmful
	}
	// Harmful: 5/20 with it, 16/20 without. Fine: 10/20 vs 11/20 (within
	// the 0.1 margin).
	onOff(f, t, harmful, true, 20, 5)
	onOff(f, t, harmful, false, 19, 15)
	onOff(f, t, fine, true, 20, 10)
	onOff(f, t, fine, false, 20, 11)
	// Harness errors are not evidence.
	he := passed("he", "code", nil, []string{harmful})
	he.Verdict.Status = eval.StatusHarnessError
	f.observe(t, he)
	for _, r := range f.rules(t) {
		if !r.Active() {
			t.Fatalf("retired before both arms had 20: %+v", r)
		}
	}
	onOff(f, t, harmful, false, 1, 1)
	byID := map[string]Rule{}
	for _, r := range f.rules(t) {
		byID[r.ID] = r
	}
	h := byID[harmful]
	if h.Active() || (h.OnOff != OnOff{Used: 20, UsedPass: 5, Omitted: 20, OmittedPass: 16}) ||
		h.RetiredReason != "onoff: pass rate 0.25 with the rule (n=20) vs 0.80 without (n=20)" {
		t.Errorf("harmful rule: %+v", h)
	}
	if !byID[fine].Active() {
		t.Errorf("rule within the margin retired: %+v", byID[fine])
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated, ReasonCreated, ReasonRetiredOnOff}) {
		t.Errorf("events %v", got)
	}
}

var _ rollout.SkillMemory = (*Memory)(nil)
