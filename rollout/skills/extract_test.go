package skills

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout"
)

const ruleFoo = "You cannot call functions that triton.language does not define; use tl.math or plain arithmetic."

func TestThirdFailureCreatesRule(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", ruleFoo)
	obs := nameErrors(3)
	f.observe(t, obs[:2]...)
	if n := len(f.llm.callsFor("skill.extract")); n != 0 || len(f.rules(t)) != 0 {
		t.Fatalf("after 2 failures: %d extract calls, %d rules; want none", n, len(f.rules(t)))
	}
	f.observe(t, obs[2])
	rs := f.rules(t)
	if len(rs) != 1 {
		t.Fatalf("after 3 failures: %d rules, want 1", len(rs))
	}
	r := rs[0]
	want := Rule{
		ID: r.ID, Version: 1, Rule: ruleFoo, Signature: "NameError: name <name> is not defined",
		FailingCode: obs[2].Code, ExampleEvalIDs: []string{"e0", "e1", "e2"},
		Torch: "2.11.0", Triton: "3.6.0", GPUArch: "NVIDIA H200", FirstSeen: t0, LastSeen: t0,
		Hits: 3, Status: export.SkillActive, SourceSearchID: "search-1",
	}
	if !strings.HasPrefix(r.ID, "sk-") || !ruleEqual(r, want) {
		t.Errorf("rule:\n got %+v\nwant %+v", r, want)
	}
	if got := f.rec.reasons(); !slices.Equal(got, []string{ReasonCreated}) {
		t.Errorf("events %v, want [created]", got)
	}
	// The prompt shows the failing code and its feedback.
	call := f.llm.callsFor("skill.extract")[0]
	user := call.Messages[len(call.Messages)-1].Content
	for _, s := range []string{"tl.foo2(x)", "feedback for e2", "NameError: name <name> is not defined"} {
		if !strings.Contains(user, s) {
			t.Errorf("extract prompt lacks %q", s)
		}
	}
}

func TestAbstainCreatesNoRule(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.push("skill.extract", "ABSTAIN", ruleFoo)
	obs := nameErrors(6)
	f.observe(t, obs[:3]...)
	if len(f.rules(t)) != 0 || len(f.rec.reasons()) != 0 {
		t.Fatalf("ABSTAIN made a rule: %+v", f.rules(t))
	}
	// The count starts again: two more failures ask nothing, the third asks.
	f.observe(t, obs[3:5]...)
	if n := len(f.llm.callsFor("skill.extract")); n != 1 {
		t.Fatalf("%d extract calls after abstain + 2, want 1", n)
	}
	f.observe(t, obs[5])
	if rs := f.rules(t); len(rs) != 1 || rs[0].Hits != 3 {
		t.Fatalf("after abstain + 3: %+v, want one rule with 3 hits", rs)
	}
}

func TestExtractRejectsBadAnswers(t *testing.T) {
	for name, answer := range map[string]string{
		"prose":     "Sure! Here is a rule: You cannot call tl.foo.",
		"lowercase": "you cannot call tl.foo.",
		"too long":  "You cannot " + strings.Repeat("do this and ", 30) + "that.",
		"empty":     "",
		"abstain.":  "ABSTAIN.",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.llm.push("skill.extract", answer)
			f.observe(t, nameErrors(3)...)
			if rs := f.rules(t); len(rs) != 0 {
				t.Errorf("answer %q made a rule: %+v", answer, rs)
			}
		})
	}
}

func TestOnlyCandidateFailuresCount(t *testing.T) {
	f := newFixture(t, Config{})
	f.llm.fallback = func(req rollout.Request) (string, error) { return ruleFoo, nil }
	var obs = nameErrors(3)
	for i := range obs {
		switch i {
		case 0:
			obs[i].Verdict.Status = eval.StatusHarnessError
		case 1:
			obs[i].Verdict.Status = eval.StatusTimeout
		case 2:
			obs[i].Verdict.TaskError = "task has no Model"
		}
	}
	f.observe(t, obs...)
	f.observe(t, failure("e9", "t", "", "code")) // no signature
	if rs := f.rules(t); len(rs) != 0 || len(f.llm.calls) != 0 {
		t.Errorf("non-candidate failures made rules %+v (%d calls)", rs, len(f.llm.calls))
	}
	// Runtime errors count like compile errors.
	rt := nameErrors(3)
	for i := range rt {
		rt[i].Verdict.Status = eval.StatusRuntimeError
	}
	f.observe(t, rt...)
	if rs := f.rules(t); len(rs) != 1 {
		t.Errorf("3 runtime errors: %d rules, want 1", len(rs))
	}
}

func TestPatternValidation(t *testing.T) {
	for _, tt := range []struct{ pattern, want string }{
		{`tl\.foo\d*\(`, `tl\.foo\d*\(`},
		{`tl\.bar\(`, ""}, // does not match the failing example
		{`tl\.foo(`, ""},  // does not compile
		{`.*`, ""},        // matches anything
		{`(?m)^`, ""},     // matches the empty string
	} {
		t.Run(tt.pattern, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.llm.push("skill.extract", ruleFoo+"\nPATTERN: "+tt.pattern)
			f.observe(t, nameErrors(3)...)
			rs := f.rules(t)
			if len(rs) != 1 || rs[0].Pattern != tt.want {
				t.Errorf("rules %+v, want one with pattern %q", rs, tt.want)
			}
		})
	}
}

// ruleEqual compares rules field by field (slices by content).
func ruleEqual(a, b Rule) bool {
	return a.ID == b.ID && a.Version == b.Version && a.Rule == b.Rule && a.Signature == b.Signature &&
		slices.Equal(a.Aliases, b.Aliases) && a.Pattern == b.Pattern && a.FailingCode == b.FailingCode &&
		slices.Equal(a.ExampleEvalIDs, b.ExampleEvalIDs) && a.Torch == b.Torch && a.Triton == b.Triton &&
		a.GPUArch == b.GPUArch && a.FirstSeen.Equal(b.FirstSeen) && a.LastSeen.Equal(b.LastSeen) &&
		a.Hits == b.Hits && a.Status == b.Status && a.RetiredReason == b.RetiredReason &&
		a.SourceSearchID == b.SourceSearchID && a.OnOff == b.OnOff
}

func TestLLMErrorCountsAsAbstain(t *testing.T) {
	f := newFixture(t, Config{Threshold: 2})
	// Nothing scripted: the fake answers an error.
	f.observe(t, nameErrors(2)...)
	if rs := f.rules(t); len(rs) != 0 || len(f.llm.callsFor("skill.extract")) != 1 {
		t.Fatalf("LLM error: rules %+v", rs)
	}
	f.llm.push("skill.extract", ruleFoo)
	f.observe(t, nameErrors(2)...)
	if rs := f.rules(t); len(rs) != 1 || rs[0].Hits != 2 {
		t.Errorf("threshold 2 after an LLM error: %+v", rs)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
	for _, c := range []Config{{Threshold: -1}, {OnOffMin: -1}, {OnOffMargin: -0.1}, {OnOffMargin: 2}} {
		if c.Validate() == nil {
			t.Errorf("%+v passed Validate", c)
		}
	}
	if d := (Config{Threshold: -1, OnOffMin: 7}).withDefaults(); d.Threshold != 3 || d.OnOffMin != 7 || d.OnOffMargin != 0.1 {
		t.Errorf("defaults: %+v", d)
	}
}

// FuzzParseExtract: the answer is an LLM's; whatever it says, a rule is one
// short "You cannot" line and a pattern never spans lines.
func FuzzParseExtract(f *testing.F) {
	f.Add(ruleFoo + "\nPATTERN: tl\\.foo")
	f.Add("ABSTAIN")
	f.Add("  You cannot x.\n\n PATTERN: `a+`\nextra")
	f.Fuzz(func(t *testing.T, s string) {
		rule, pattern, ok := parseExtract(s)
		if !ok {
			if rule != "" || pattern != "" {
				t.Fatalf("rejected answer returned %q %q", rule, pattern)
			}
			return
		}
		if !strings.HasPrefix(rule, "You cannot ") || len(rule) > maxRuleLen || strings.Contains(rule, "\n") || strings.Contains(pattern, "\n") {
			t.Fatalf("accepted %q -> rule %q pattern %q", s, rule, pattern)
		}
	})
}
