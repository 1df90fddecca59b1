package gateway

import (
	"net/http"
	"os"
	"testing"
)

// A reference sent inline that is a registered task's source is run and
// logged as that task (one task, one group in every export); any other
// source stays inline.
func TestInlineReferenceOfARegisteredTask(t *testing.T) {
	st := startFakeStack(t)
	src, err := os.ReadFile("../datasets/ci/1_add_relu.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ reference, path, name string }{
		{string(src), "/tasks/ci/1_add_relu.py", "1_add_relu"},
		{string(src) + "\n# edited\n", "/inline/reference.py", "inline"},
	} {
		var resp batchResponse
		req := map[string]any{"reference": tt.reference, "codes": []string{"import torch  # GOOD"}}
		rec := call(t, st.h, http.MethodPost, "/v1/rewards", "/v1/rewards", req, &resp)
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		st.ev.mu.Lock()
		got := st.ev.jobs[len(st.ev.jobs)-1].Task.Path
		st.ev.mu.Unlock()
		if got != tt.path || resp.TaskName != tt.name {
			t.Errorf("reference ran as %s (task_name %q), want %s (%q)", got, resp.TaskName, tt.path, tt.name)
		}
	}
	// An episode on the same inline source takes the task's id.
	var ep map[string]any
	rec := call(t, st.h, http.MethodPost, "/v1/episodes", "/v1/episodes", map[string]any{"reference": string(src)}, &ep)
	if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if ep["task_id"] != "ci/1_add_relu" {
		t.Errorf("episode task_id %v, want ci/1_add_relu", ep["task_id"])
	}
}
