package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/rollout/llm"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// realHarness is the Supervisor in CPU mode (Triton's interpreter), as CI
// runs it; skipped without a python with torch unless required.
func realHarness(t *testing.T) *harness.Supervisor {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	py, err := harness.ResolvePython(os.Getenv(harness.EnvPython))
	if err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") == "1" {
			t.Fatalf("KERNELGATE_REQUIRE_PYTHON=1 but no python: %v", err)
		}
		t.Skipf("no python with torch: %v", err)
	}
	sup := harness.New(harness.Config{Python: py, Device: "cpu", Concurrency: 1, CacheDir: t.TempDir()}, kgtest.Logger(t))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := sup.Start(ctx); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") != "1" {
			t.Skipf("python %s cannot run the zygote: %v", py, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(sup.Close)
	return sup
}

const ruleText = "You cannot call tl.maximum_fast: triton.language has no such function; use tl.maximum."

// storyLLM scripts the story by what each prompt asks: large steps write a
// broken kernel three times, then prose once, then the honest kernel; the
// reviser gives guidance; the tuner fixes a broken kernel or shrinks the
// block of a correct one; the skill memory gets a rule (with a pattern).
func storyLLM(t *testing.T, honest, broken string) *llmtest.Server {
	sys := func(s string) func(llmtest.Request) bool {
		return func(r llmtest.Request) bool { return strings.Contains(r.System(), s) }
	}
	user := func(s string, also ...string) func(llmtest.Request) bool {
		return func(r llmtest.Request) bool {
			if r.System() != "" || !strings.Contains(r.LastUser(), s) {
				return false
			}
			for _, a := range also {
				if !strings.Contains(r.LastUser(), a) {
					return false
				}
			}
			return true
		}
	}
	large := func(r llmtest.Request) bool {
		u := r.LastUser()
		return r.System() == "" && !strings.Contains(u, "Do not write code") && !strings.Contains(u, "Answer with edits")
	}
	fix := "<<<<<<< SEARCH\n" + "    tl.store(out_ptr + offs, tl.maximum_fast(x + y, 0.0), mask=mask)\n=======\n" +
		"    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)\n>>>>>>> REPLACE\n"
	faster := "<<<<<<< SEARCH\n        BLOCK = 1024\n=======\n        BLOCK = 256\n>>>>>>> REPLACE\n"
	return llmtest.New(t,
		llmtest.Reply(ruleText+"\nPATTERN: tl\\.maximum_fast\\(").When(sys("You maintain validity rules")).WithUsage(30, 20),
		llmtest.Reply("NEW").When(sys("You deduplicate")).WithUsage(30, 1),
		llmtest.Reply("Replace the call that does not exist; then try a smaller block.").When(user("Do not write code")).WithUsage(200, 12),
		llmtest.Reply(fix).When(user("Answer with edits", "maximum_fast")).WithUsage(300, 40),
		llmtest.Reply(faster).When(user("Answer with edits", "BLOCK = 1024")).WithUsage(300, 30),
		llmtest.Reply("Answering in prose: no edits today.").When(user("Answer with edits")).WithUsage(300, 8),
		llmtest.Reply(fenced(broken)).When(large).WithUsage(500, 150).Repeat(3),
		llmtest.Reply("I would fuse the add and the relu into one kernel.").When(large).WithUsage(500, 15).Once(),
		llmtest.Reply(fenced(honest)).When(large).WithUsage(500, 160),
	)
}

// The story on the real harness: every action, broken code fixed,
// a prose answer as a failed step, a rule extracted from three identical
// failures, retrieved into later prompts and retired, and both tables
// written by the Parquet sink.
func TestStoryOnRealHarness(t *testing.T) {
	sup := realHarness(t)
	honest := repoFile(t, "datasets/solutions/ci/1_add_relu.py")
	broken := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum_fast(x + y, 0.0)", 1)
	srv := storyLLM(t, honest, broken)
	dir := t.TempDir()
	b := openBus(t, dir)
	defer b.Close()
	log := kgtest.Logger(t)
	runSink(t, b, dir, "story")

	client, err := llm.New(llmConfig(srv.URL()), log)
	if err != nil {
		t.Fatal(err)
	}
	mem := skills.New(skills.NewFileStore(filepath.Join(dir, "skills.json")), client,
		skills.Config{OnChange: SkillEvents(b, log)}, log)
	m := newManager(t, b, sup, mem, srv.URL())
	defer m.Close()
	st, err := m.Start(t.Context(), Request{TaskID: taskID, Steps: 12, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	st = waitState(t, m, st.SearchID, 5*time.Minute)
	tree := treeOf(st)
	if st.State != StateDone || st.Steps != 12 {
		t.Fatalf("status %s, %d steps; tree:\n%s", st.State, st.Steps, tree)
	}
	for _, a := range []string{"large", "small", "tune"} {
		if st.Actions[a] == 0 {
			t.Errorf("no %s step; actions %v; tree:\n%s", a, st.Actions, tree)
		}
	}
	if st.Best == nil || st.Best.Verdict.Status != eval.StatusCorrect || strings.Contains(st.Best.Code, "maximum_fast") {
		t.Fatalf("best %+v; tree:\n%s", st.Best, tree)
	}
	t.Logf("tree:\n%s", tree)
	wantStatuses(t, st, tree)
	checkProseStep(t, m, st.SearchID)
	rule := checkRule(t, mem, srv)
	if err := mem.Retire(t.Context(), rule.ID, "story test"); err != nil {
		t.Fatal(err)
	}
	checkTables(t, dir, st, rule.ID)
}

func treeOf(st Status) string {
	var b strings.Builder
	for _, n := range st.Nodes {
		fmt.Fprintf(&b, "%d <- %d %s %s r=%.3f dup=%v\n", n.Node, n.Parent, n.Action, n.Status, n.Reward, n.Duplicate)
	}
	return b.String()
}

// wantStatuses: the broken kernels failed, some node is correct, and a
// small step made a node (edits applied to its parent).
func wantStatuses(t *testing.T, st Status, tree string) {
	t.Helper()
	failed, correct, small, fixes, variants := 0, 0, 0, 0, 0
	byID := map[int]NodeSummary{}
	for _, n := range st.Nodes {
		byID[n.Node] = n
		p := byID[n.Parent]
		if n.Action == "small" && n.Status == "correct" && p.Status != "" && p.Status != "correct" {
			fixes++ // broken code -> a fix
		}
		if n.Action != "large" && n.Status == "correct" && p.Status == "correct" {
			variants++ // a correct kernel -> a variant (tuned or edited)
		}
		switch n.Status {
		case string(eval.StatusCorrect):
			correct++
		case string(eval.StatusRuntimeError), string(eval.StatusCompileError):
			failed++
		}
		if n.Action == "small" {
			small++
		}
	}
	if failed < 3 || correct < 2 || small < 1 || fixes < 1 || variants < 1 {
		t.Fatalf("failed %d, correct %d, small nodes %d, fixes %d, variants %d; tree:\n%s",
			failed, correct, small, fixes, variants, tree)
	}
}

// checkRule: three failures with one signature made a rule, and a later
// search prompt held it.
func checkRule(t *testing.T, mem *skills.Memory, srv *llmtest.Server) skills.Rule {
	t.Helper()
	rules, err := mem.Rules(t.Context())
	if err != nil || len(rules) != 1 || rules[0].Rule != ruleText || !rules[0].Active() || rules[0].Hits < 3 {
		t.Fatalf("rules %+v, %v", rules, err)
	}
	retrieved := false
	for _, r := range srv.Requests() {
		if r.System() == "" && strings.Contains(r.LastUser(), "Rules learned from earlier failures") &&
			strings.Contains(r.LastUser(), ruleText) {
			retrieved = true
		}
	}
	if !retrieved {
		t.Fatal("no search prompt held the rule")
	}
	return rules[0]
}

// checkTables reads back both tables the sink wrote.
func checkTables(t *testing.T, dir string, st Status, ruleID string) {
	t.Helper()
	kgtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		steps := readParquet[export.SearchStep](t, dir, export.TableSearchSteps)
		if len(steps) != 12 {
			return fmt.Errorf("%d search_steps rows, want 12", len(steps))
		}
		tokens := 0
		for _, s := range steps {
			tokens += int(s.TokensIn + s.TokensOut)
			if s.SearchID != st.SearchID || s.TaskID != taskID || (s.Node != nil && s.Status == nil) {
				return fmt.Errorf("row %+v", s)
			}
		}
		if tokens != st.TokensIn+st.TokensOut {
			return fmt.Errorf("rows hold %d tokens, status %d", tokens, st.TokensIn+st.TokensOut)
		}
		// Every evaluated step is an evaluations row (one join key: eval_id).
		evals := map[string]export.Evaluation{}
		for _, e := range readParquet[export.Evaluation](t, dir, export.TableEvaluations) {
			evals[e.EvalID] = e
		}
		joined := 0
		for _, s := range steps {
			if s.EvalID == nil {
				continue
			}
			e, ok := evals[*s.EvalID]
			if !ok {
				return fmt.Errorf("step %d's eval_id %s has no evaluations row (%d rows)", s.Seq, *s.EvalID, len(evals))
			}
			if e.BatchID != st.SearchID || e.TaskID != taskID || s.Code == nil || e.Code != *s.Code || s.Status == nil || e.Status != *s.Status ||
				e.TaskSource == "" || len(e.Prompt) != len(s.PromptMessages) {
				return fmt.Errorf("evaluations row %+v for step %+v", e, s)
			}
			joined++
		}
		if joined == 0 || joined != len(evals) {
			return fmt.Errorf("%d steps joined, %d evaluations rows", joined, len(evals))
		}
		// The search's own rows: started, then done, with its configuration and best node.
		var states []string
		var final export.Search
		for _, r := range readParquet[export.Search](t, dir, export.TableSearches) {
			if r.SearchID == st.SearchID {
				states = append(states, r.State)
				if r.TS.After(final.TS) || final.SearchID == "" {
					final = r
				}
			}
		}
		slices.Sort(states)
		if !slices.Equal(states, []string{"done", "running"}) || final.State != "done" || final.Steps != 12 ||
			final.StepsBudget == 0 || final.Options == nil || final.BestEvalID == nil || evals[*final.BestEvalID].EvalID == "" {
			return fmt.Errorf("searches rows %v, final %+v", states, final)
		}
		// Every LLM call of the search is a row; their tokens are the search's.
		callTokens, purposes := 0, map[string]int{}
		for _, c := range readParquet[export.LLMCall](t, dir, export.TableLLMCalls) {
			if c.SearchID != nil && *c.SearchID == st.SearchID {
				callTokens += int(c.PromptTokens + c.CompletionTokens)
				purposes[c.Purpose]++
				if len(c.Messages) == 0 || (c.Error == nil) != (c.Completion != nil) {
					return fmt.Errorf("llm_calls row %+v", c)
				}
			}
		}
		if callTokens != st.TokensIn+st.TokensOut || purposes["small.revise"] == 0 {
			return fmt.Errorf("llm_calls: %d tokens (search %d), purposes %v", callTokens, st.TokensIn+st.TokensOut, purposes)
		}
		if err := callKeysJoin(steps, readParquet[export.LLMCall](t, dir, export.TableLLMCalls), st.SearchID); err != nil {
			return err
		}
		sk := readParquet[export.Skill](t, dir, export.TableSkills)
		last := export.Skill{}
		for _, r := range sk {
			if r.SkillID == ruleID && r.Version > last.Version {
				last = r
			}
		}
		if len(sk) < 2 || last.Status != export.SkillRetired || !strings.HasPrefix(last.Reason, "retired") {
			return fmt.Errorf("skills rows %d, latest %+v", len(sk), last)
		}
		return nil
	})
}

func readParquet[T any](t *testing.T, dir, table string) []T {
	files, _ := filepath.Glob(filepath.Join(dir, "parquet", "table="+table, "date=*", "part-*.parquet"))
	var rows []T
	for _, f := range files {
		got, err := parquet.ReadFile[T](f)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, got...)
	}
	return rows
}

// checkProseStep: the answer in prose is a failed step with its reason.
func checkProseStep(t *testing.T, m *Manager, id string) {
	t.Helper()
	ch, err := m.Subscribe(t.Context(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	prose := 0
	for ev := range ch {
		if ev.Node == 0 && ev.Action == "large" && strings.Contains(ev.Error, "no code") && strings.Contains(ev.Completion, "fuse") {
			prose++
		}
	}
	if prose != 1 {
		t.Fatalf("%d failed prose steps, want 1", prose)
	}
}

// callKeysJoin: a search's steps and LLM calls name each other, both ways:
// each call of a step lists the step (step_id, step_seq), each step lists
// its calls in order (a small step two: reviser, tuner), and the skill
// memory's calls name no step.
func callKeysJoin(steps []export.SearchStep, calls []export.LLMCall, searchID string) error {
	byID := map[string]export.LLMCall{}
	for _, c := range calls {
		byID[c.CallID] = c
		switch {
		case c.SearchID == nil && (c.StepID != nil || c.StepSeq != nil):
			return fmt.Errorf("the skill memory's call %s names step %v", c.CallID, *c.StepID)
		case c.SearchID != nil && *c.SearchID == searchID && (c.StepID == nil || c.StepSeq == nil):
			return fmt.Errorf("the search's call %s (%s) names no step", c.CallID, c.Purpose)
		}
	}
	listed := 0
	for _, s := range steps {
		var purposes []string
		for _, id := range s.CallIDs {
			c, ok := byID[id]
			if !ok || *c.StepID != s.EventID || *c.StepSeq != s.Seq {
				return fmt.Errorf("step %d lists call %s, which names step %v", s.Seq, id, c.StepID)
			}
			purposes = append(purposes, c.Purpose)
		}
		listed += len(s.CallIDs)
		switch {
		case s.Action == "small" && s.Failure == nil && !slices.Equal(purposes, []string{"small.revise", "small.tune"}):
			return fmt.Errorf("small step %d: calls %v", s.Seq, purposes)
		case s.Action == "tune" && len(purposes) != 0:
			return fmt.Errorf("tune step %d made calls %v", s.Seq, purposes)
		}
	}
	named := 0
	for _, c := range calls {
		if c.SearchID != nil && *c.SearchID == searchID {
			named++
		}
	}
	if listed != named {
		return fmt.Errorf("steps list %d calls, %d calls name a step of the search", listed, named)
	}
	return nil
}
