package skills

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/rollout"
)

func TestSameSignatureIsAHit(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo)
	f.observe(t, nameErrors(3)...)
	more := failure("e7", "task7", "NameError: name 'tl.whatever' is not defined", "other code")
	more.Verdict.Env.Triton = "3.7.1"
	f.observe(t, more)
	rs := f.rules(t)
	if len(rs) != 1 {
		t.Fatalf("%d rules, want 1", len(rs))
	}
	r := rs[0]
	if r.Version != 2 || r.Hits != 4 || !slices.Equal(r.ExampleEvalIDs, []string{"e0", "e1", "e2", "e7"}) || r.Triton != "3.7.1" {
		t.Errorf("after a 4th failure: %+v", r)
	}
	if n := len(f.llm.calls); n != 1 {
		t.Errorf("%d LLM calls, want 1 (a hit asks nothing)", n)
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated, ReasonHit}) {
		t.Errorf("events %v", got)
	}
	// Example ids stop at maxExampleIDs.
	for i := range maxExampleIDs {
		f.observe(t, failure(fmt.Sprintf("x%d", i), "t", "NameError: name 'q' is not defined", "c"))
	}
	if r := f.rules(t)[0]; len(r.ExampleEvalIDs) != maxExampleIDs || r.Hits != 4+maxExampleIDs || r.Version != 2+maxExampleIDs {
		t.Errorf("after %d failures: hits %d, v%d, examples %v", 4+maxExampleIDs, r.Hits, r.Version, r.ExampleEvalIDs)
	}
}

// undefinedGlobal are n failures of a second NameError-class signature.
func undefinedGlobal(n int) []rollout.Observation {
	var out []rollout.Observation
	for i := range n {
		out = append(out, failure(fmt.Sprintf("g%d", i), "task", fmt.Sprintf("NameError: global name 'blk%d' is undefined in kernel", i), "y = tl.foo(x)"))
	}
	return out
}

func TestLLMDuplicateMerges(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo, "You cannot use names a Triton kernel does not define.")
	f.observe(t, nameErrors(3)...)
	first := f.rules(t)[0]
	f.llm.push("skill.dedup", "DUPLICATE "+first.ID)
	f.observe(t, undefinedGlobal(3)...)

	rs := f.rules(t)
	if len(rs) != 1 {
		t.Fatalf("%d rules after a DUPLICATE answer, want 1: %+v", len(rs), rs)
	}
	r := rs[0]
	alias := "NameError: global name <name> is undefined in kernel"
	if r.ID != first.ID || r.Version != 2 || r.Hits != 6 || !slices.Equal(r.Aliases, []string{alias}) ||
		!slices.Equal(r.ExampleEvalIDs, []string{"e0", "e1", "e2", "g0", "g1", "g2"}) || r.Rule != ruleFoo {
		t.Errorf("merged rule: %+v", r)
	}
	// The dedup prompt showed the existing rule.
	dd := f.llm.callsFor("skill.dedup")
	if len(dd) != 1 || !strings.Contains(dd[0].Messages[1].Content, first.ID) || !strings.Contains(dd[0].Messages[1].Content, ruleFoo) {
		t.Fatalf("dedup calls: %+v", dd)
	}
	// The merged signature is now a hit of the rule, not a new count.
	f.observe(t, undefinedGlobal(1)...)
	if r := f.rules(t)[0]; r.Hits != 7 || r.Version != 3 {
		t.Errorf("alias failure: hits %d v%d, want 7 v3", r.Hits, r.Version)
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated, ReasonMerged, ReasonHit}) {
		t.Errorf("events %v", got)
	}
	if n := len(f.llm.callsFor("skill.extract")); n != 2 {
		t.Errorf("%d extract calls, want 2", n)
	}
}

func TestLLMNewAndBadDedupAnswersKeepBoth(t *testing.T) {
	for _, answer := range []string{"NEW", "DUPLICATE sk-nosuchid", "I think they are the same"} {
		t.Run(answer, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.llm.push("skill.extract", ruleFoo, "You cannot use names a Triton kernel does not define.")
			f.llm.push("skill.dedup", answer)
			f.observe(t, nameErrors(3)...)
			f.observe(t, undefinedGlobal(3)...)
			if rs := f.rules(t); len(rs) != 2 {
				t.Errorf("%d rules, want 2", len(rs))
			}
		})
	}
}

func TestOtherErrorClassSkipsDedup(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo, "You cannot index a block with a runtime integer.")
	f.observe(t, nameErrors(3)...)
	for i := range 3 {
		f.observe(t, failure(fmt.Sprintf("i%d", i), "t", "IndexError: index out of range", "c"))
	}
	if n := len(f.llm.callsFor("skill.dedup")); n != 0 || len(f.rules(t)) != 2 {
		t.Errorf("%d dedup calls, %d rules; want 0 and 2", n, len(f.rules(t)))
	}
}
