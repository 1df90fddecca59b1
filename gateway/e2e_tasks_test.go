package gateway

import (
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/episode"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// stackDeps is what `kernelgate serve` gives the gateway besides the bus:
// the ci suite plus API tasks in the bus, and the episode store.
func stackDeps(t *testing.T, b *bus.Bus) (*tasks.Registry, *episode.Store) {
	t.Helper()
	store, err := tasks.OpenBusStore(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	reg := ciRegistry(t, store)
	eps, err := episode.Open(t.Context(), b, episode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return reg, eps
}

// TestEndToEndTasksEpisodes runs the task registry, task checks, rewards by
// task id, a two-step episode and the OpenRLHF endpoint against the real
// CPU-mode zygote, as `kernelgate serve` wires them.
func TestEndToEndTasksEpisodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	dataDir := t.TempDir()
	h := startStack(t, dataDir)
	addRelu := readFile(t, "datasets/ci/1_add_relu.py")
	honest := readFile(t, "datasets/solutions/ci/1_add_relu.py")
	wrong := strings.Replace(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x - y, 0.0)", 1)
	fence := func(code string) string { return "Here you go:\n```python\n" + code + "\n```\n" }
	edit := func(src, find, replace string) string {
		t.Helper()
		if !strings.Contains(src, find) {
			t.Fatalf("%q not in the source", find)
		}
		return strings.Replace(src, find, replace, 1)
	}
	fast := map[string]any{"seeds": 2, "timing": false}

	t.Run("list and get", func(t *testing.T) {
		var list taskList
		call(t, h, http.MethodGet, "/v1/tasks", "/v1/tasks", nil, &list)
		if len(list.Tasks) != 8 {
			t.Fatalf("%d tasks, want the 8 of ci", len(list.Tasks))
		}
		var got taskView
		call(t, h, http.MethodGet, "/v1/tasks/ci/1_add_relu", "/v1/tasks/{id}", nil, &got)
		if got.Source != addRelu || got.TaskHash != eval.HashSource(addRelu) || !strings.Contains(got.Prompt, "ModelNew") {
			t.Errorf("ci/1_add_relu: %+v", got)
		}
	})

	// relu(x * y): valid, with a kernel of its own.
	mulRelu := edit(addRelu, "return torch.relu(x + y)", "return torch.relu(x * y)")
	mulKernel := edit(honest, "tl.maximum(x + y, 0.0)", "tl.maximum(x * y, 0.0)")
	t.Run("register", func(t *testing.T) {
		var got taskView
		rec := call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/mul_relu", "source": mulRelu}, &got)
		if rec.Code != http.StatusCreated || got.ID != "mine/mul_relu" || got.TaskHash != eval.HashSource(mulRelu) ||
			len(got.CheckWarnings) != 0 {
			t.Fatalf("good task: %d %s", rec.Code, rec.Body)
		}
		// Valid, but its bf16 reference rounds sixteen times: registered, and its check's
		// float64 pass says how far it is from its exact answer and what to declare.
		drift := edit(edit(addRelu, "return torch.relu(x + y)",
			"for _ in range(16):\n            x = x * 1.0107\n        return x + y"),
			"return [torch.randn(64, 128), torch.randn(64, 128)]",
			"return [torch.randn(64, 128, dtype=torch.bfloat16), torch.randn(64, 128, dtype=torch.bfloat16)]")
		var warned taskView
		rec = call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/drift", "source": drift}, &warned)
		if rec.Code != http.StatusCreated || len(warned.CheckWarnings) != 1 ||
			!strings.Contains(warned.CheckWarnings[0], "from its exact answer") ||
			!strings.Contains(warned.CheckWarnings[0], "declare ATOL = ") {
			t.Fatalf("drifting bf16 task: %d %s", rec.Code, rec.Body)
		}
		rec = call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/mul_relu", "source": mulRelu}, &got)
		if rec.Code != http.StatusOK {
			t.Fatalf("again: %d %s", rec.Code, rec.Body)
		}
		for _, bad := range []struct{ name, source, reason string }{
			{"syntax error", edit(addRelu, "def forward(self, x, y):", "def forward(self, x, y)"), "syntax error at line"},
			{"raises", edit(addRelu, "return torch.relu(x + y)", "raise RuntimeError('reference is broken')"), "reference raised RuntimeError: reference is broken"},
			{"constant output", edit(addRelu, "return torch.relu(x + y)", "return torch.zeros_like(x)"), "degenerate reference"},
		} {
			t.Run(bad.name, func(t *testing.T) {
				rec := call(t, h, http.MethodPost, "/v1/tasks", "/v1/tasks", map[string]any{"id": "mine/bad", "source": bad.source}, nil)
				wantError(t, rec, http.StatusUnprocessableEntity, CodeTaskInvalid, "source", "task mine/bad refused", "/tasks/mine/bad.py", bad.reason)
			})
		}
		if rec := call(t, h, http.MethodGet, "/v1/tasks/mine/bad", "/v1/tasks/{id}", nil, nil); rec.Code != http.StatusNotFound {
			t.Errorf("a refused task was registered: %d", rec.Code)
		}
	})

	t.Run("rewards by task_id", func(t *testing.T) {
		var resp batchResponse
		rec := call(t, h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{
			"task_id": "mine/mul_relu", "completions": []string{fence(mulKernel), fence(honest)},
			"reward_fn": "binary", "options": fast,
		}, &resp)
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if resp.Results[0].Status != eval.StatusCorrect || *resp.Rewards[0] != 1 || resp.Results[0].TaskHash != eval.HashSource(mulRelu) {
			t.Errorf("mul kernel on mul task: %s %v: %.300s", resp.Results[0].Status, *resp.Rewards[0], resp.Results[0].Feedback)
		}
		if resp.Results[1].Status != eval.StatusIncorrect {
			t.Errorf("add kernel on mul task: %s", resp.Results[1].Status)
		}
		rec = call(t, h, http.MethodPost, "/v1/rewards", "/v1/rewards", map[string]any{"task_id": "mine/nope", "codes": []string{"x"}}, nil)
		wantError(t, rec, http.StatusNotFound, CodeTaskNotFound, "task_id", `task "mine/nope" not found`)
	})

	t.Run("episode", func(t *testing.T) {
		var start episodeStart
		rec := call(t, h, http.MethodPost, "/v1/episodes", "/v1/episodes",
			map[string]any{"task_id": "ci/1_add_relu", "max_turns": 3, "reward_fn": "binary", "options": fast}, &start)
		if rec.Code != http.StatusCreated || !strings.Contains(start.Observation.Prompt, addRelu) {
			t.Fatalf("start: %d %s", rec.Code, rec.Body)
		}
		path := "/v1/episodes/" + start.EpisodeID + "/step"
		var first, second stepResponse
		call(t, h, http.MethodPost, path, "/v1/episodes/{id}/step", map[string]any{"completion": fence(wrong)}, &first)
		if first.Done || first.Turn != 1 || first.Observation.Verdict.Status != eval.StatusIncorrect ||
			!strings.Contains(first.Observation.Feedback, "Turn 1 of 3: incorrect") || !strings.Contains(first.Observation.Feedback, "mismatch") {
			t.Fatalf("step 1: %+v", first)
		}
		call(t, h, http.MethodPost, path, "/v1/episodes/{id}/step", map[string]any{"completion": fence(honest)}, &second)
		if !second.Done || second.DoneReason != "solved" || second.Turn != 2 || second.Reward != 1 ||
			second.Observation.Verdict.Status != eval.StatusCorrect {
			t.Fatalf("step 2: %+v", second)
		}
		rec = call(t, h, http.MethodPost, path, "/v1/episodes/{id}/step", map[string]any{"completion": fence(honest)}, nil)
		wantError(t, rec, http.StatusConflict, CodeEpisodeDone, "", "is done")
		var ep episodeView
		call(t, h, http.MethodGet, "/v1/episodes/"+start.EpisodeID, "/v1/episodes/{id}", nil, &ep)
		if ep.State != "done" || len(ep.History) != 2 {
			t.Fatalf("episode: %+v", ep)
		}
		// Both steps land in the episode_steps table, every field filled.
		root := filepath.Join(dataDir, "parquet", "table="+export.TableEpisodeSteps)
		var rows []export.EpisodeStep
		kgtest.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
			var err error
			rows, err = readRows[export.EpisodeStep](root)
			if err == nil && len(rows) != 2 {
				err = fmt.Errorf("%d rows under %s, want 2", len(rows), root)
			}
			return err
		})
		slices.SortFunc(rows, func(a, b export.EpisodeStep) int { return int(a.Turn - b.Turn) })
		for i, r := range rows {
			if r.EpisodeID != start.EpisodeID || r.Turn != int64(i+1) || r.TaskID != "ci/1_add_relu" || r.EventID == "" ||
				r.TS.IsZero() || r.Completion != ep.History[i].Completion || r.Observation != ep.History[i].Observation.Feedback ||
				r.EvalID != ep.History[i].EvalID || r.Status != string(ep.History[i].Observation.Verdict.Status) || r.Done != (i == 1) {
				t.Errorf("row %d: %+v", i, r)
			}
		}
	})

	t.Run("openrlhf", func(t *testing.T) {
		prompt := "Make this faster.\n"
		req := map[string]any{
			"query":   []string{prompt + fence(honest), prompt + fence(wrong), prompt + "no idea", prompt + fence(mulKernel)},
			"prompts": []string{prompt, prompt, prompt, prompt},
			"labels":  []string{"ci/1_add_relu", "ci/1_add_relu", addRelu, "mine/mul_relu"},
			"options": fast,
		}
		var resp openRLHFResponse
		rec := call(t, h, http.MethodPost, "/openrlhf/reward?reward_fn=binary", "/openrlhf/reward", req, &resp)
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if want := []float64{1, 0, 0, 1}; !slices.Equal(resp.Rewards, want) || !slices.Equal(resp.Scores, want) {
			t.Errorf("rewards %v scores %v, want %v", resp.Rewards, resp.Scores, want)
		}
		if want := []float64{1, 1, 0, 1}; !slices.Equal(resp.ExtraLogs["compiled"], want) {
			t.Errorf("compiled %v, want %v", resp.ExtraLogs["compiled"], want)
		}
	})
}

// readRows reads every Parquet file under root as rows of T.
func readRows[T any](root string) ([]T, error) {
	var out []T
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".parquet" {
			return err
		}
		rows, err := parquet.ReadFile[T](path)
		out = append(out, rows...)
		return err
	})
	return out, err
}
