package gateway

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

func TestTaskListAndGet(t *testing.T) {
	st := startFakeStack(t)
	var list taskList
	call(t, st.h, http.MethodGet, "/v1/tasks", "/v1/tasks", nil, &list)
	if len(list.Tasks) != 8 || list.Tasks[0].ID != "ci/1_add_relu" || list.Next != "" {
		t.Fatalf("list %+v", list)
	}
	if v := list.Tasks[0]; v.Source != "" || v.Prompt != "" || v.Origin != "suite" || !strings.HasPrefix(v.TaskHash, "sha256:") {
		t.Errorf("summary %+v", v)
	}
	// Paging: 3, then 3 after the last id, then the rest.
	var page taskList
	call(t, st.h, http.MethodGet, "/v1/tasks?limit=3", "/v1/tasks", nil, &page)
	if len(page.Tasks) != 3 || page.Next != page.Tasks[2].ID {
		t.Fatalf("page 1 %+v", page)
	}
	var seen []string
	for after := ""; ; {
		var p taskList
		call(t, st.h, http.MethodGet, "/v1/tasks?limit=3&after="+after, "/v1/tasks", nil, &p)
		for _, v := range p.Tasks {
			seen = append(seen, v.ID)
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(seen) != 8 || seen[7] != list.Tasks[7].ID {
		t.Errorf("paged through %v", seen)
	}
	var api taskList
	call(t, st.h, http.MethodGet, "/v1/tasks?origin=api", "/v1/tasks", nil, &api)
	if len(api.Tasks) != 0 {
		t.Errorf("api tasks %+v", api)
	}

	src, _ := os.ReadFile("../datasets/ci/1_add_relu.py")
	for _, path := range []string{"/v1/tasks/ci/1_add_relu", "/v1/tasks/ci%2F1_add_relu"} {
		var got taskView
		rec := call(t, st.h, http.MethodGet, path, "/v1/tasks/{id}", nil, &got)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if got.ID != "ci/1_add_relu" || got.Name != "1_add_relu" || got.Source != string(src) ||
			got.TaskHash != eval.HashSource(string(src)) || !strings.Contains(got.Prompt, string(src)) {
			t.Errorf("%s: %+v", path, got)
		}
	}

	for _, tt := range []struct {
		path, specPath string
		status         int
		code           Code
		field          string
		want           string
	}{
		{"/v1/tasks/ci/nope", "/v1/tasks/{id}", 404, CodeTaskNotFound, "", `task "ci/nope" not found`},
		{"/v1/tasks/", "/v1/tasks/{id}", 404, CodeTaskNotFound, "", `task "" not found`},
		{"/v1/tasks?origin=mine", "/v1/tasks", 400, CodeInvalidRequest, "origin", "suite or api"},
		{"/v1/tasks?limit=0", "/v1/tasks", 400, CodeInvalidRequest, "limit", "1..1000"},
		{"/v1/tasks?limit=x", "/v1/tasks", 400, CodeInvalidRequest, "limit", "1..1000"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			rec := call(t, st.h, http.MethodGet, tt.path, tt.specPath, nil, nil)
			wantError(t, rec, tt.status, tt.code, tt.field, tt.want)
		})
	}
}

func TestRegisterTask(t *testing.T) {
	st := startFakeStack(t)
	const good = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
	var got taskView
	rec := call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/relu", "source": good}, &got)
	if rec.Code != http.StatusCreated || got.ID != "mine/relu" || got.Origin != "api" || got.Source != good || got.Prompt == "" {
		t.Fatalf("register: %d %+v", rec.Code, got)
	}
	checks := len(st.ev.jobs)
	if checks != 1 || !st.ev.jobs[0].TaskCheck || st.ev.jobs[0].Task.Path != "/tasks/mine/relu.py" {
		t.Fatalf("task checks run: %+v", st.ev.jobs)
	}
	// Again with the same source: 200, and nothing is run.
	rec = call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/relu", "source": good}, &got)
	if rec.Code != http.StatusOK || len(st.ev.jobs) != checks {
		t.Fatalf("again: %d, %d checks", rec.Code, len(st.ev.jobs))
	}
	// Without an id, the id is content addressed.
	rec = call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"source": good + "\n"}, &got)
	if rec.Code != http.StatusCreated || !strings.HasPrefix(got.ID, "api/") || got.Name != strings.TrimPrefix(got.ID, "api/") {
		t.Fatalf("default id: %d %+v", rec.Code, got)
	}
	var list taskList
	call(t, st.h, http.MethodGet, "/v1/tasks?origin=api", "/v1/tasks", nil, &list)
	if len(list.Tasks) != 2 {
		t.Errorf("api tasks %+v", list.Tasks)
	}
	// The registered task is a task_id for rewards (resolved: no worker answers
	// within wait_s here would be 504, not 404; the scripted one answers).
	var rw batchResponse
	rec = call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{"task_id": "mine/relu", "codes": []string{"GOOD"}, "reward_fn": "binary"}, &rw)
	if rec.Code != http.StatusOK || *rw.Rewards[0] != 1 || rw.Results[0].TaskHash != eval.HashSource(good) {
		t.Fatalf("rewards by task_id: %d %s", rec.Code, rec.Body)
	}

	rec = call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{"task_id": "", "codes": []string{"GOOD"}}, nil)
	wantError(t, rec, http.StatusBadRequest, CodeInvalidRequest, "task_id", "task_id is empty")

	src, _ := os.ReadFile("../datasets/ci/1_add_relu.py")
	big := strings.Repeat("#", 256<<10+1)
	for _, tt := range []struct {
		name   string
		body   any
		status int
		code   Code
		field  string
		want   []string
	}{
		{"refused by the task check", map[string]any{"id": "mine/broken", "source": good + "# BROKEN\n"}, 422, CodeTaskInvalid, "source",
			[]string{"task mine/broken refused", "/tasks/mine/broken.py: reference raised RuntimeError: BROKEN"}},
		{"another source under a taken id", map[string]any{"id": "mine/relu", "source": good + "# v2\n"}, 409, CodeTaskExists, "id", []string{"mine/relu", "another source"}},
		{"a suite id", map[string]any{"id": "ci/1_add_relu", "source": good}, 409, CodeTaskExists, "id", []string{"suite"}},
		{"malformed JSON", []byte(`{"source": `), 400, CodeBadJSON, "", []string{"malformed JSON"}},
		{"unknown field", map[string]any{"reference": good}, 400, CodeBadJSON, "reference", []string{"unknown field"}},
		{"no source", map[string]any{"id": "x"}, 400, CodeInvalidRequest, "source", []string{"source is required"}},
		{"blank source", map[string]any{"source": "  \n"}, 400, CodeInvalidRequest, "source", []string{"source is required"}},
		{"invalid id", map[string]any{"id": "../etc", "source": good}, 400, CodeInvalidRequest, "id", []string{"segments of letters"}},
		{"empty id", map[string]any{"id": "", "source": good}, 400, CodeInvalidRequest, "id", []string{"empty task id"}},
		{"source too large", map[string]any{"source": big}, 413, CodeBodyTooLarge, "source", []string{"at most 262144"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", tt.body, nil)
			wantError(t, rec, tt.status, tt.code, tt.field, tt.want...)
		})
	}
	// A suite's own source under its id is already registered.
	rec = call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "ci/1_add_relu", "source": string(src)}, &got)
	if rec.Code != http.StatusOK || got.Origin != "suite" {
		t.Errorf("suite source: %d %s", rec.Code, rec.Body)
	}
}

// A task check that cannot run (no zygote) is the gateway's trouble, not the
// task's: 503, not 422.
func TestRegisterTaskCheckCannotRun(t *testing.T) {
	st := startFakeStack(t)
	rec := call(t, st.h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/x", "source": "class Model: pass  # FAIL\n"}, nil)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "the task check could not run", "no zygote is up")
	if rec := call(t, st.h, http.MethodGet, "/v1/tasks/mine/x", "/v1/tasks/{id}", nil, nil); rec.Code != http.StatusNotFound {
		t.Errorf("registered anyway: %d", rec.Code)
	}
}
