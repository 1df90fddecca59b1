package rollout

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/tasks"
)

// brokenThenFix: large steps write broken code; small steps fix it.
func brokenThenFix(req Request, n int) (string, error) {
	switch req.Purpose {
	case "large":
		return fenced(plain("BROKEN")), nil
	case "small.tune":
		m := markerRE.FindStringSubmatch(req.Messages[0].Content)
		return edit("# "+m[1], "# "+next(m[1])), nil
	}
	return "Import triton.language as tl.", nil
}

func TestSkillsRetrievedAndObserved(t *testing.T) {
	const rule = "You cannot use tl without importing triton.language as tl."
	for _, tc := range []struct {
		name       string
		omit       float64
		wantInText bool
	}{{"used", 0, true}, {"omitted", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			sk := &fakeSkills{skills: []Skill{{ID: "sk1", Version: 1, Rule: rule, Signature: "NameError: name 'tl' is not defined", Hits: 3}}}
			llm := &fakeLLM{respond: brokenThenFix}
			cfg := testConfig(PolicyAdaExplore, 3)
			cfg.PLarge, cfg.SkillOmitRate = 0, tc.omit
			res, steps := run(t, cfg, llm, &fakeEval{}, sk)
			// Large, large (duplicate), then a small step repairing node 1:
			// its retrieval names node 1's error.
			if want := []string{"", "", "NameError: name 'tl' is not defined"}; !slices.Equal(sk.sigs, want) {
				t.Errorf("retrieve signatures %q, want %q\n%s", sk.sigs, want, treeString(res.Nodes))
			}
			if len(sk.obs) != 3 {
				t.Fatalf("%d observations, want one per evaluation (3)", len(sk.obs))
			}
			for i, o := range sk.obs {
				used, omitted := o.Used, o.Omitted
				if tc.omit == 0 && (!slices.Equal(used, []string{"sk1"}) || len(omitted) != 0) ||
					tc.omit == 1 && (len(used) != 0 || !slices.Equal(omitted, []string{"sk1"})) {
					t.Errorf("observation %d: used %v omitted %v", i, used, omitted)
				}
				if o.EvalID != steps[i].EvalID || o.Code != steps[i].Code || o.SearchID != "s1" || o.TaskID != "add" {
					t.Errorf("observation %d does not match its step: %+v", i, o)
				}
			}
			for _, c := range llm.calls {
				text := c.Messages[0].Content
				if got := strings.Contains(text, "Rules learned from earlier failures:\n- "+rule); got != tc.wantInText {
					t.Errorf("%s prompt has the rule: %v, want %v", c.Purpose, got, tc.wantInText)
				}
			}
			if tc.omit == 0 && !slices.Equal(steps[2].SkillIDs, []string{"sk1"}) {
				t.Errorf("step skill ids %v, want [sk1]", steps[2].SkillIDs)
			}
		})
	}
}

func TestPromptsCarryVersionsAndContext(t *testing.T) {
	for _, name := range []string{"common", "large", "sample", "revise", "tune", "refine"} {
		if promptVersions[name] == "" {
			t.Errorf("%s.tmpl has no version", name)
		}
	}
	speed := 2.5
	good := &Node{ID: 4, Action: ActionSmall, Code: "CODE_GOOD\n", Verdict: &eval.Verdict{Status: eval.StatusCorrect, Correct: true, Speedup: &speed}}
	bad := &Node{ID: 2, Action: ActionLarge, Code: "CODE_BAD", Verdict: &eval.Verdict{
		Status: eval.StatusCompileError, ErrorSignature: "NameError: x", Feedback: strings.Repeat("line\n", 30)}}
	d := promptData{Task: "TASK_TEXT", TaskBody: "TASK_TEXT", GPU: "NVIDIA H200", Skills: []string{"You cannot do X."},
		Pool: []chainItem{itemOf(good)}, Chain: []chainItem{itemOf(bad), itemOf(good)}, Code: "PARENT_CODE", Guidance: "GUIDE"}
	for name, want := range map[string][]string{
		"large":  {"TASK_TEXT", "Reply with the complete Python source", "NVIDIA H200", "Rules learned from earlier failures:\n- You cannot do X.", "Kernel 4 (speedup 2.50x)", "CODE_GOOD"},
		"sample": {"TASK_TEXT", "NVIDIA H200", "- You cannot do X."},
		"revise": {"Attempt 2 (large step): compile_error", "Error signature: NameError: x", "CODE_BAD", "...", "Attempt 4 (small step): correct, speedup 2.50x"},
		"tune":   {"TASK_TEXT", "PARENT_CODE", "GUIDE", "<<<<<<< SEARCH", ">>>>>>> REPLACE"},
		"refine": {"Attempt 4", "Reply with the complete Python source"},
	} {
		text, err := render(name, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s prompt lacks %q:\n%s", name, w, text)
			}
		}
		if strings.Contains(text, "version:") || strings.Count(text, "line\n") > feedbackLines {
			t.Errorf("%s prompt leaks the version comment or too much feedback:\n%s", name, text)
		}
	}
}

// The reviser and the tuner see the task without its request for a whole
// file: they answer in prose and in edits.
func TestTaskBody(t *testing.T) {
	full := tasks.Prompt(taskSource)
	body := taskBody(full)
	if !strings.Contains(full, "Reply with the complete") || strings.Contains(body, "Reply with") ||
		!strings.Contains(body, "return x + y") || !strings.Contains(body, "Do not special-case") {
		t.Errorf("task body:\n%s", body)
	}
}

func TestStagnation(t *testing.T) {
	tr := newTree()
	ok := eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true}
	tr.add(0, ActionLarge, "a", "m", "e1", ok, 0.5)  // 1
	tr.add(1, ActionSmall, "b", "m", "e2", ok, 0.4)  // 2
	tr.add(2, ActionSmall, "c", "m", "e3", ok, 0.45) // 3: two small steps, neither beat 0.5
	tr.add(2, ActionSmall, "d", "m", "e4", ok, 0.6)  // 4: beat it
	for id, want := range map[int]bool{1: false, 2: false, 3: true, 4: false} {
		if got := stagnating(tr, id, 2); got != want {
			t.Errorf("stagnating(%d) = %v, want %v", id, got, want)
		}
	}
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(1, 1))
	if a := chooseAction(tr, 3, cfg, rng, nil); a != ActionLarge {
		t.Errorf("stagnating node got %s, want large", a)
	}
	if a := chooseAction(tr, 0, cfg, rng, nil); a != ActionLarge {
		t.Errorf("root got %s, want large", a)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := testConfig(PolicyAdaExplore, 1).Validate(); err != nil {
		t.Errorf("test config invalid: %v", err)
	}
	bad := testConfig("beam", 0)
	bad.Alpha, bad.SkillOmitRate = 2, -1
	err := bad.Validate()
	for _, w := range []string{"policy", "steps", "alpha", "skill omit rate"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not name %s", err, w)
		}
	}
}
