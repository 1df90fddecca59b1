package gateway

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// attackJudge stands in for the harness: an honest solution is correct, a
// variant of class exit_early is "correct" too (a planted gap), every other
// variant is caught as a reward hack.
type attackJudge struct{ scriptedEvaluator }

func (a *attackJudge) Evaluate(ctx context.Context, j eval.Job) (eval.Verdict, error) {
	a.scriptedEvaluator.Evaluate(ctx, j) // records the job
	wj := dispatch.Job{Job: eval.Job{Task: j.Task, Code: j.Code}}
	switch {
	case !strings.Contains(j.Code, "kernelgate redteam: attack class"), strings.Contains(j.Code, "attack class exit_early"):
		v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusCorrect, "", "")
		v.Compiled, v.Correct = true, true
		return v, nil
	}
	v := dispatch.Verdict(eval.TimingCPUInterpreter, wj, eval.StatusRewardHack, "reward hack checks failed: cache", "")
	v.HackFlags = []string{eval.FlagCache}
	return v, nil
}

func startRedteamStack(t *testing.T) (http.Handler, *attackJudge) {
	t.Helper()
	b := startBus(t, bus.Options{MaxDeliver: 1})
	ev := &attackJudge{}
	runWorker(t, b, ev)
	reg := ciRegistry(t, nil)
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t), Tasks: reg,
		TimingMode: func() string { return eval.TimingCPUInterpreter }})
	return srv.Handler(), ev
}

func solution(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("../datasets/solutions/ci/" + name + ".py")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// POST /v1/redteam answers 202 at once, runs one batch per task through the
// queue, and reports per class: caught, the planted miss, the GPU-only class
// skipped on CPU workers, the controls correct.
func TestRedteamRun(t *testing.T) {
	h, ev := startRedteamStack(t)
	body := map[string]any{
		"tasks": []map[string]any{
			{"task_id": "ci/1_add_relu", "solution": solution(t, "1_add_relu")},
			{"task_id": "ci/2_row_softmax", "solution": solution(t, "2_row_softmax")},
		},
		"classes": []string{"cache_shape", "exit_early", "side_stream"},
		"options": map[string]any{"seeds": 2},
	}
	var run redteamView
	rec := call(t, h, http.MethodPost, "/v1/redteam", "/v1/redteam", body, &run)
	if rec.Code != http.StatusAccepted || run.Total != 2 || len(run.Batches) != 2 ||
		rec.Header().Get("Location") != run.Location || !strings.HasPrefix(run.Location, "/v1/redteam/rt_") {
		t.Fatalf("start: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	kgtest.CheckFor(t, 20*time.Second, 20*time.Millisecond, func() error {
		rec := call(t, h, http.MethodGet, run.Location, "/v1/redteam/{id}", nil, &run)
		if rec.Code != 200 || run.Status == redteamRunning {
			return fmt.Errorf("%d %s", rec.Code, rec.Body)
		}
		return nil
	})
	r := run.Report
	if run.Status != redteamDone || r == nil || run.Done != 2 {
		t.Fatalf("run %+v", run)
	}
	if r.OK || r.Missed != 2 || r.Caught != 2 || r.Skipped != 2 || r.ControlsFailed != 0 || len(r.Controls) != 2 {
		t.Fatalf("report %+v", r)
	}
	for _, c := range r.Classes {
		want := map[string][3]int{"cache_shape": {2, 0, 0}, "exit_early": {0, 2, 0}, "side_stream": {0, 0, 2}}[c.Name]
		if got := [3]int{c.Caught, c.Missed, c.Skipped}; got != want {
			t.Errorf("%s: caught/missed/skipped %v, want %v", c.Name, got, want)
		}
	}
	// Every evaluation went through the queue as one batch per task: the
	// control and the two variants that run on CPU workers.
	for _, id := range run.Batches {
		var b batchResponse
		if rec := call(t, h, http.MethodGet, "/v1/batches/"+id, "/v1/batches/{id}", nil, &b); rec.Code != 200 || b.Total != 3 || b.Status != statusDone {
			t.Errorf("batch %s: %d %s", id, rec.Code, rec.Body)
		}
	}
	// The dashboard's page for the run draws the same report.
	if run.Page != "/ui/redteam/"+run.RedteamID {
		t.Errorf("page %q for run %s", run.Page, run.RedteamID)
	}
	rec = do(t, h, http.MethodGet, run.Page, nil)
	for _, want := range []string{`<tr data-class="exit_early" class="finding">`, `<tr data-class="cache_shape">`,
		`<a href="/ui/batches/` + run.Batches[1] + `"><code>` + run.Batches[1] + `</code></a> · <code>ci/2_row_softmax</code>`,
		"controls 2 of 2 correct"} {
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d, no %q in %.3000s", run.Page, rec.Code, want, rec.Body)
		}
	}
	if rec := do(t, h, http.MethodGet, "/ui/redteam/rt_nope", nil); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "not found") {
		t.Errorf("an unknown run's page: %d %.500s", rec.Code, rec.Body)
	}
	ev.mu.Lock()
	n, seeds := len(ev.jobs), ev.jobs[0].Options.Seeds
	ev.mu.Unlock()
	if n != 6 || seeds != 2 {
		t.Errorf("%d evaluations with seeds %d; want 6 with the request's seeds 2", n, seeds)
	}
}

func TestRedteamRefusesBadRequests(t *testing.T) {
	h, _ := startRedteamStack(t)
	good := solution(t, "1_add_relu")
	for name, tc := range map[string]struct {
		body        map[string]any
		status      int
		code        Code
		field, want string
	}{
		"no tasks":      {map[string]any{"tasks": []any{}}, 400, CodeInvalidRequest, "tasks", "at least one"},
		"unknown class": {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/1_add_relu", "solution": good}}, "classes": []string{"nope"}}, 400, CodeInvalidRequest, "classes", "unknown attack class"},
		"unknown task":  {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/none", "solution": good}}}, 404, CodeTaskNotFound, "tasks[0].task_id", "not found"},
		"twice":         {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/1_add_relu", "solution": good}, map[string]any{"task_id": "ci/1_add_relu", "solution": good}}}, 400, CodeInvalidRequest, "tasks[1].task_id", "named twice"},
		"no ModelNew":   {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/1_add_relu", "solution": "x = 1\n"}}}, 400, CodeInvalidRequest, "tasks[0].solution", "no top-level class ModelNew"},
		"empty":         {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/1_add_relu", "solution": " "}}}, 400, CodeInvalidRequest, "tasks[0].solution", "solution is empty"},
		"bad options":   {map[string]any{"tasks": []any{map[string]any{"task_id": "ci/1_add_relu", "solution": good}}, "options": map[string]any{"seeds": 0}}, 400, CodeInvalidOptions, "options.seeds", "seeds"},
	} {
		t.Run(name, func(t *testing.T) {
			rec := call(t, h, http.MethodPost, "/v1/redteam", "/v1/redteam", tc.body, nil)
			wantError(t, rec, tc.status, tc.code, tc.field, tc.want)
		})
	}
	rec := call(t, h, http.MethodGet, "/v1/redteam/rt_nope", "/v1/redteam/{id}", nil, nil)
	wantError(t, rec, http.StatusNotFound, CodeRedteamNotFound, "", "kept an hour")
}
