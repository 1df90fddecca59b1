package ui_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

const rule = "You cannot call tl.foo: triton.language has no such function."

// TestDashboardInChromium is the dashboard as a person sees it: a live
// `kernelgate serve` (CPU mode, a scripted LLM) and headless Chromium. It
// loads every page, watches a batch complete, follows a red-team run to its
// report, watches a search tree grow and the skill it teaches appear, and
// saves a screenshot of each.
func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kernelgate serve, a Python zygote and Chromium")
	}
	honest := repoFile(t, "datasets/solutions/ci/1_add_relu.py")
	broken := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.foo(x + y, 0.0)", 1)
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	if broken == honest || wrong == honest {
		t.Fatal("the solution changed: cannot make the broken and wrong kernels")
	}
	chromium(t) // fail or skip before the slow parts
	llm := scriptedLLM(t, broken, honest, rule, 4)
	g := startServe(t, buildBinary(t), llm.URL())
	b := newBrowser(t, g.URL)
	opts := map[string]any{"seeds": 1, "timing": false}

	t.Run("login", func(t *testing.T) {
		b.open(t, "/ui/")
		if n := b.count(t, "form#login"); n != 1 || strings.Contains(b.text(t, "main"), "Verdicts over time") {
			t.Fatalf("without a key the overview is not the login form: %.300q", b.text(t, "main"))
		}
		b.do(t, `document.querySelector("#key").value = "kg_`+strings.Repeat("a", 52)+`"; document.querySelector("#login").requestSubmit()`)
		b.waitFor(t, 10*time.Second, "an unknown key is refused", func() string {
			if !strings.Contains(b.text(t, "#error"), "unknown or revoked") {
				return "error " + b.text(t, "#error")
			}
			return ""
		})
		b.do(t, `document.querySelector("#key").value = "`+g.Key+`"; document.querySelector("#login").requestSubmit()`)
		b.waitFor(t, 10*time.Second, "the key opens the overview", func() string {
			if b.count(t, "#overview") != 1 {
				return "page " + b.text(t, "main")
			}
			return ""
		})
	})

	t.Run("pages", func(t *testing.T) {
		for path, want := range map[string]string{"/ui/": "Verdicts over time", "/ui/batches": "Batch id",
			"/ui/searches": "no search yet", "/ui/skills": "no rule yet", "/ui/tasks": "ci/1_add_relu"} {
			b.open(t, path)
			if got := b.text(t, "main"); !strings.Contains(got, want) {
				t.Errorf("%s: no %q in %.300q", path, want, got)
			}
		}
	})

	// The overview polls in a tab of its own while the batch and the search
	// run, so its verdicts-over-time chart has something to show.
	ov := b.tab(t)
	ov.open(t, "/ui/")

	t.Run("batch", func(t *testing.T) {
		fence := func(code string) string { return "```python\n" + code + "\n```" }
		var ref struct {
			BatchID string `json:"batch_id"`
		}
		status := g.post(t, "/v1/rewards", map[string]any{"task_id": "ci/1_add_relu", "options": opts, "wait_s": 0,
			"completions": []string{fence(honest), fence(wrong), "no code at all"}}, &ref)
		if status != 202 && status != 200 || ref.BatchID == "" {
			t.Fatalf("POST /v1/rewards: %d %+v", status, ref)
		}
		b.open(t, "/ui/batches/"+ref.BatchID)
		b.waitFor(t, 120*time.Second, "the batch completes on its page", func() string {
			if s := b.text(t, "#state"); s != "done" {
				return "state " + s + ", " + b.text(t, "#done") + " items in"
			}
			return ""
		})
		statuses, err := eval[[]string](b, `[...document.querySelectorAll("#items tr td:nth-child(2)")].map(e => e.textContent.trim())`)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"correct", "incorrect", "invalid_submission"}; fmt.Sprint(statuses) != fmt.Sprint(want) {
			t.Errorf("item statuses %v, want %v", statuses, want)
		}
		// The honest item's code, read from the Parquet log once the sink has
		// written it (until then the page says so; closed and opened, it asks again).
		b.waitFor(t, 60*time.Second, "the first item's code comes from the log", func() string {
			got, err := eval[string](b, `(() => {
				const d = document.querySelector('#items details[data-code="0"]');
				if (!d) return "no code link";
				if (!d.open) { d.open = true; return "opened"; }
				const s = d.querySelector("pre").textContent;
				if (!s.includes("class ModelNew")) d.open = false;
				return s; })()`)
			if err != nil {
				return err.Error()
			}
			if !strings.Contains(got, "class ModelNew") || strings.Contains(got, "```") {
				return fmt.Sprintf("code shown: %.120q", got)
			}
			return ""
		})
		b.do(t, `document.querySelector("#items details").open = true`)
		b.shot(t, "batch")
	})

	// A small red-team run on the real CPU harness: two classes on one task,
	// followed on its page until the report is drawn.
	t.Run("redteam", func(t *testing.T) {
		var run struct {
			Batches []string `json:"batches"`
			Page    string   `json:"page"`
		}
		if status := g.post(t, "/v1/redteam", map[string]any{"tasks": []map[string]string{{"task_id": "ci/1_add_relu", "solution": honest}},
			// Three seeds, as CI's red team: with one, cache_shape's memo is never asked a second time.
			"classes": []string{"cache_shape", "exit_early"}, "options": map[string]any{"seeds": 3, "timing": false}}, &run); status != 202 || run.Page == "" || len(run.Batches) != 1 {
			t.Fatalf("POST /v1/redteam: %d %+v", status, run)
		}
		b.open(t, run.Page)
		first := b.text(t, "#rtstate")
		b.waitFor(t, 90*time.Second, "the run's report appears on its page", func() string {
			if b.count(t, "#rtclasses tbody tr") != 2 {
				return "state " + b.text(t, "#rtstate") + ", " + b.text(t, "#rtdone") + " batches in"
			}
			return ""
		})
		// Opened while running, the page's script polled the run and reloaded
		// the page once it ended (the run may also be done before it opens).
		nav, _ := eval[string](b, `performance.getEntriesByType("navigation")[0].type`)
		if first == "running" && nav != "reload" {
			t.Errorf("opened running, the report came by a %q, not the script's reload", nav)
		}
		t.Logf("the page opened %s; the report came by a %s", first, nav)
		if got := b.text(t, "#rttotals"); !strings.Contains(got, "2 caught") || !strings.Contains(got, "0 missed") ||
			!strings.Contains(got, "controls 1 of 1 correct") {
			t.Errorf("totals %q: want both variants caught and the control correct", got)
		}
		if marks := b.text(t, "#rtclasses td.marks"); marks != "+" {
			t.Errorf("cache_shape's mark %q, want +", marks)
		}
		if n := b.count(t, `#rtbatches a[href="/ui/batches/`+run.Batches[0]+`"]`); n != 1 {
			t.Errorf("the run's batch is not linked: %q", b.text(t, "#rtbatches"))
		}
		b.shot(t, "redteam")
	})

	t.Run("search", func(t *testing.T) {
		var ref struct {
			SearchID string `json:"search_id"`
		}
		if status := g.post(t, "/v1/searches", map[string]any{"task_id": "ci/1_add_relu", "steps": 6,
			"policy": "adaexplore", "options": opts}, &ref); status != 202 {
			t.Fatalf("POST /v1/searches: %d %+v", status, ref)
		}
		b.open(t, "/ui/searches/"+ref.SearchID)
		seen := map[int]bool{}
		b.waitFor(t, 150*time.Second, "the search ends on its page", func() string {
			seen[b.count(t, "#tree circle.node")] = true
			if s := b.text(t, "#sstate"); s != "done" {
				return "state " + s + " after " + b.text(t, "#steps") + " steps"
			}
			return ""
		})
		final := b.count(t, "#tree circle.node")
		grew := 0
		for n := range seen {
			if n > 0 && n < final {
				grew++
			}
		}
		if final < 3 || grew == 0 {
			t.Errorf("tree: %d nodes at the end, sizes seen on the way %v: it did not grow while watched", final, seen)
		}
		if n := b.count(t, `#tree circle[data-status="correct"]`); n == 0 {
			t.Errorf("no correct node in the tree")
		}
		if l := b.text(t, "#treelegend"); !strings.Contains(l, "correct") || !strings.Contains(l, "runtime_error") {
			t.Errorf("tree legend %q: want the correct and the broken kernels' statuses", l)
		}
		if c := b.count(t, "#curve polyline"); c != 1 {
			t.Errorf("best-so-far curve: %d lines", c)
		}
		// Each edge is labelled with its action; the tokens spent are counted and drawn.
		labels, err := eval[[]string](b, `[...document.querySelectorAll("#tree text")].map(e => e.textContent.trim())`)
		if err != nil {
			t.Fatal(err)
		}
		actions := 0
		for _, l := range labels {
			if l == "large" || l == "small" || l == "tune" {
				actions++
			}
		}
		if actions < final-1 {
			t.Errorf("edge labels %v: want an action (large, small, tune) on each of the %d edges", labels, final-1)
		}
		var in, out int
		if _, err := fmt.Sscanf(b.text(t, "#tokens"), "%d in / %d out", &in, &out); err != nil || in <= 0 || out <= 0 {
			t.Errorf("tokens spent %q: want both counts above 0 (%v)", b.text(t, "#tokens"), err)
		}
		if c := b.count(t, "#tokencurve polyline"); c != 1 {
			t.Errorf("token curve: %d lines", c)
		}
		b.do(t, `document.querySelector('#tree circle[data-status="correct"]').dispatchEvent(new MouseEvent("click"))`)
		d := b.text(t, "#diff")
		if !strings.Contains(d, "tl.maximum") {
			t.Errorf("the diff of a correct node does not show its code: %.200q", d)
		}
		// A diff, not the bare code: every line kept ("  "), added ("+ ", class add) or
		// removed ("- ", class del).
		lines, err := eval[[]string](b, `[...document.querySelector("#diff").childNodes].flatMap(n =>
			n.nodeType === 1 ? [n.className + ":" + n.textContent] :
			n.textContent.split("\n").filter(l => l !== "").map(l => "keep:" + l))`)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "keep:  ") && !strings.HasPrefix(l, "add:+ ") && !strings.HasPrefix(l, "del:- ") {
				t.Errorf("diff line %q is not marked kept, added or removed (of %d lines)", l, len(lines))
				break
			}
		}
		if len(lines) < 5 {
			t.Errorf("diff of %d lines: %q", len(lines), lines)
		}
		b.shot(t, "search")
		b.open(t, "/ui/searches")
		if !strings.Contains(b.text(t, "#searchlist"), ref.SearchID) {
			t.Errorf("the searches page does not list %s", ref.SearchID)
		}
	})

	t.Run("skill", func(t *testing.T) {
		b.waitFor(t, 60*time.Second, "the rule appears on the skills page", func() string {
			b.open(t, "/ui/skills")
			if got := b.text(t, "#skilltable"); !strings.Contains(got, rule) {
				return fmt.Sprintf("skills table: %.200q", got)
			}
			return ""
		})
		b.open(t, "/ui/skills?q=no+such+rule")
		if n := b.count(t, "tr.skill"); n != 0 {
			t.Errorf("a filter that matches nothing shows %d rules", n)
		}
		b.open(t, "/ui/skills?q=tl.foo&status=active")
		b.shot(t, "skills")
	})

	t.Run("overview", func(t *testing.T) {
		ov.waitFor(t, 20*time.Second, "the overview counts every verdict", func() string {
			if n, _ := strconv.Atoi(ov.text(t, "#total")); n < 9 { // the batch's 3, the search's 6
				return "verdicts " + ov.text(t, "#total")
			}
			return ""
		})
		// The gateway's history counts the search's evaluations too, as they come.
		ov.waitFor(t, 20*time.Second, "the history counts every verdict", func() string {
			if n, _ := strconv.Atoi(ov.text(t, "#history-count")); n < 9 {
				return "history " + ov.text(t, "#history-count")
			}
			return ""
		})
		if r := ov.text(t, "#rate"); r == "–" {
			t.Errorf("evaluations/s not computed after several polls")
		}
		if n := ov.count(t, "#mix rect"); n == 0 {
			t.Errorf("the verdicts-over-time chart is empty after the batch and the search")
		}
		if !strings.Contains(ov.text(t, "#legend"), "correct") {
			t.Errorf("chart legend %q has no correct", ov.text(t, "#legend"))
		}
		if !strings.Contains(ov.text(t, "#workers"), "cpu") {
			t.Errorf("workers table: %q", ov.text(t, "#workers"))
		}
		ov.waitFor(t, 10*time.Second, "the slowest tasks list the batch's task", func() string {
			if got := ov.text(t, "#slowest"); !strings.Contains(got, "ci/1_add_relu") {
				return "slowest tasks: " + got
			}
			return ""
		})
		if c := ov.text(t, "#cache"); !strings.HasSuffix(c, "%") {
			t.Errorf("cache hits %q: no rate after the verdicts", c)
		}
		if _, err := strconv.Atoi(ov.text(t, "#backlog")); err != nil {
			t.Errorf("sink backlog %q is not a count", ov.text(t, "#backlog"))
		}
		ov.shot(t, "overview")
		b.open(t, "/ui/tasks")
		if n := b.count(t, "td.ref-ms"); n == 0 {
			t.Error("the tasks page shows no reference time (datasets/manifest.json has the ci suite's)")
		}
		b.shot(t, "tasks")
	})

	t.Run("revoked", func(t *testing.T) {
		g.revoke(t)
		ov.waitFor(t, 20*time.Second, "the overview stops on a revoked key", func() string {
			if e := ov.text(t, "#error"); !strings.Contains(e, "log in again") {
				return "error " + e
			}
			return ""
		})
		b.open(t, "/ui/skills")
		if b.count(t, "form#login") != 1 || b.count(t, "tr.skill") != 0 {
			t.Errorf("a revoked key still reads the skills: %.300q", b.text(t, "main"))
		}
	})
}
