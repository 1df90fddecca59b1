package ui_test

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	kgeval "github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/gateway/ui"
	"github.com/kernelgate/kernelgate/redteam"
)

// knownReport is a report as redteam.Build makes it, over two tasks:
// cache_shape caught on the first and an error on the second, exit_early
// caught on the first and missed (judged correct) on the second,
// side_stream skipped (GPU-only), and the second task's control incorrect.
func knownReport(t *testing.T) *redteam.Report {
	t.Helper()
	classes, err := redteam.Select(redteam.Classes(), []string{"cache_shape", "exit_early", "side_stream"})
	if err != nil {
		t.Fatal(err)
	}
	v := func(s kgeval.Status, flags ...string) *kgeval.Verdict {
		return &kgeval.Verdict{Status: s, HackFlags: flags, TimingMode: kgeval.TimingCPUInterpreter, Feedback: "max abs diff 3.2\nmore"}
	}
	a, b := "ci/1_add_relu", "ci/2_row_softmax"
	var cases []redteam.Case
	for _, task := range []string{a, b} {
		cases = append(cases, redteam.Case{Target: task, Code: "honest"})
		for i := range classes {
			cs := redteam.Case{Target: task, Class: &classes[i], Code: "variant"}
			if classes[i].GPUOnly {
				cs.Skip = "GPU-only class on the CPU interpreter"
			}
			cases = append(cases, cs)
		}
	}
	results := []redteam.Result{
		{Verdict: v(kgeval.StatusCorrect)}, {Verdict: v(kgeval.StatusRewardHack, "cache")}, {Verdict: v(kgeval.StatusRuntimeError)}, {},
		{Verdict: v(kgeval.StatusIncorrect)}, {Err: "the worker was lost"}, {Verdict: v(kgeval.StatusCorrect)}, {},
	}
	r := redteam.Build(cases, results, classes, redteam.Judging{})
	r.WallS = 12.34
	return &r
}

// redteamAPI answers GET /v1/redteam/{id} as the gateway does: rt_done
// with knownReport, rt_running half way, 404 otherwise, 403 for a key
// without admin.
func redteamAPI(t *testing.T) http.HandlerFunc {
	rep := knownReport(t)
	created := time.Now().Add(-time.Minute).UTC()
	runs := map[string]any{
		"/v1/redteam/rt_done": map[string]any{"redteam_id": "rt_done", "status": "done", "done": 2, "total": 2,
			"batches": []string{"b_one", "b_two"}, "created_at": created, "location": "/v1/redteam/rt_done", "report": rep},
		"/v1/redteam/rt_running": map[string]any{"redteam_id": "rt_running", "status": "running", "done": 1, "total": 2,
			"batches": []string{"b_one", "b_two"}, "created_at": created, "location": "/v1/redteam/rt_running"},
		"/v1/redteam/rt_failed": map[string]any{"redteam_id": "rt_failed", "status": "failed", "done": 0, "total": 1,
			"batches": []string{"b_x"}, "created_at": created, "location": "/v1/redteam/rt_failed",
			"error": map[string]string{"code": "wait_timeout", "message": "batch b_x of task ci/1_add_relu: 3 of 4 verdicts not in"}},
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") == "Bearer kg_reward" {
			w.WriteHeader(403)
			w.Write([]byte(`{"code":"forbidden","message":"key \"trainer\" lacks scope \"admin\""}`))
			return
		}
		run, ok := runs[r.URL.Path]
		if !ok {
			w.WriteHeader(404)
			w.Write([]byte(`{"code":"redteam_not_found","message":"red-team run not found: runs are kept an hour after they end"}`))
			return
		}
		json.NewEncoder(w).Encode(run)
	}
}

// row is the table row of id's element whose data-class is name.
func row(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr data-class="` + regexp.QuoteMeta(name) + `".*?</tr>`).FindString(body)
	if m == "" {
		t.Fatalf("no row for class %s in %.3000s", name, body)
	}
	return m
}

func TestRedteamPageShowsTheReport(t *testing.T) {
	h := ui.New(ui.Config{API: redteamAPI(t)})
	rec := get(t, h, "/ui/redteam/rt_done", "kg_admin", "")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("status %d: %.2000s", rec.Code, body)
	}
	// One row per class, its marks in the report's task order, as the CLI's table.
	marks := regexp.MustCompile(`>([+M.Eg ])</span>`) // html/template writes + as &#43;
	for name, want := range map[string]string{"cache_shape": "+E", "exit_early": "+M", "side_stream": ".."} {
		r := html.UnescapeString(row(t, body, name))
		got := ""
		for _, m := range marks.FindAllStringSubmatch(r, -1) {
			got += m[1]
		}
		if got != want {
			t.Errorf("%s: marks %q, want %q in %s", name, got, want, r)
		}
	}
	if r := row(t, body, "cache_shape"); !strings.Contains(r, "reward_hack ×1") || !strings.Contains(r, "flags: cache ×1") {
		t.Errorf("cache_shape's row does not say what caught it: %s", r)
	}
	if r := row(t, body, "exit_early"); !strings.Contains(r, `class="finding"`) || !strings.Contains(r, "runtime_error ×1") {
		t.Errorf("exit_early's row is not a finding or lacks its catch: %s", r)
	}
	if strings.Contains(row(t, body, "cache_shape"), `class="finding"`) {
		t.Error("a class with no miss is shown as a finding")
	}
	for what, re := range map[string]string{
		"the miss, with task, class and status": `(?s)<table id="rtmisses">.*<code>ci/2_row_softmax</code></td><td><code>exit_early</code></td><td><span class="st st-correct">correct</span>.*judged correct`,
		"the failed control as a finding":       `(?s)<table id="rtcontrols">.*<tr class="finding"><td><code>ci/2_row_softmax</code></td>\s*<td><span class="st st-incorrect">incorrect</span>.*the honest solution is incorrect: max abs diff 3.2<`,
		"the correct control, not a finding":    `<tr><td><code>ci/1_add_relu</code></td>\s*<td><span class="st st-correct">correct</span>`,
		"the error":                             `(?s)<table id="rterrors">.*<code>cache_shape</code></td><td><pre>the worker was lost</pre>`,
		"the totals":                            `(?s)2 tasks, 3 classes \(cpu_interpreter\): 6 variants generated, 3 evaluated,\s*<strong>2 caught</strong>, <strong>1 missed</strong>.*controls 1 of 2 correct; wall time 12.3 s`,
		"batches linked, with their tasks":      `<a href="/ui/batches/b_one"><code>b_one</code></a> · <code>ci/1_add_relu</code>.*<a href="/ui/batches/b_two">`,
		"not ok":                                `st-failed">not ok<`,
		"no polling once done":                  `data-status="done"`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("the page lacks %s (%s): %.6000s", what, re, body)
		}
	}
}

func TestRedteamPageStates(t *testing.T) {
	h := ui.New(ui.Config{API: redteamAPI(t)})
	for _, tt := range []struct {
		name, path, key string
		status          int
		has, hasNot     []string
	}{
		{"running: progress, batches, no report", "/ui/redteam/rt_running", "kg_admin", 200,
			[]string{`data-status="running"`, `<span id="rtdone">1</span> of 2 batches`, `<progress id="rtprogress" value="1" max="2">`,
				`href="/ui/batches/b_two"`, "when every batch is in"}, []string{`id="rtclasses"`, `id="rtmisses"`}},
		{"failed: the error", "/ui/redteam/rt_failed", "kg_admin", 200,
			[]string{`class="st st-failed">failed`, "the run failed (wait_timeout): batch b_x of task ci/1_add_relu", `href="/ui/batches/b_x"`},
			[]string{`id="rtclasses"`, "when every batch is in"}},
		{"unknown id: the error page with 404", "/ui/redteam/rt_nope", "kg_admin", 404,
			[]string{`id="error"`, "red-team run not found"}, []string{`data-page="redteam"`}},
		{"a key without admin is told so", "/ui/redteam/rt_done", "kg_reward", 403,
			[]string{`lacks scope &#34;admin&#34;`}, []string{`data-page="redteam"`, `id="login"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, h, tt.path, tt.key, "")
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d: %.500s", rec.Code, tt.status, body)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in %.3000s", s, body)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(body, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
	// The page's script polls the run through the pass-through.
	if rec := get(t, h, "/ui/api/v1/redteam/rt_running", "kg_admin", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"running"`) {
		t.Errorf("pass-through: %d %s", rec.Code, rec.Body)
	}
}
