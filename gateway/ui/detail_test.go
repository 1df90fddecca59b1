package ui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/gateway/ui"
)

// detailAPI serves what the overview's detail and the tasks page read;
// slowest says how GET /v1/stats/slowest-tasks answers.
func detailAPI(slowest int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Write([]byte(`# TYPE kernelgate_evaluations_total counter
kernelgate_evaluations_total{status="correct"} 6
kernelgate_evaluations_total{status="reward_hack"} 2
# TYPE kernelgate_evaluation_hack_flags_total counter
kernelgate_evaluation_hack_flags_total{flag="decoy"} 2
kernelgate_evaluation_hack_flags_total{flag="forge"} 0
# TYPE kernelgate_evaluations_cached_total counter
kernelgate_evaluations_cached_total{from="cache"} 2
kernelgate_evaluations_cached_total{from="shared"} 0
# TYPE kernelgate_sink_backlog_events gauge
kernelgate_sink_backlog_events 17
`))
		case "/v1/gpus":
			w.Write([]byte(`{"mode":"cpu_interpreter","gpus":[]}`))
		case "/v1/stats/slowest-tasks":
			w.WriteHeader(slowest)
			if slowest != 200 {
				w.Write([]byte(`{"code":"internal","message":"no ranking"}`))
				return
			}
			w.Write([]byte(`{"runs":9,"since":"2026-12-01T11:00:00Z","tasks":[{"task_id":"level1/3_matmul","task_name":"3_matmul",` +
				`"task_hash":"sha256:aa","evaluations":4,"median_exec_s":12.5,"max_exec_s":30,"last_at":"2026-12-01T11:59:00Z"}]}`))
		case "/v1/tasks":
			w.Write([]byte(`{"tasks":[{"id":"ci/1_add_relu","name":"1_add_relu","origin":"suite","task_hash":"sha256:bb",` +
				`"created_at":"2026-11-30T00:00:00Z","gpu":{"name":"NVIDIA H200","ref_ms":0.00603,"ref_p10_ms":0.0056,"ref_p90_ms":0.0067,` +
				`"solution_speedup":1.78,"solution_ms":0.00374,"measured_at":"2026-11-30"}},` +
				`{"id":"api/x","name":"x","origin":"api","task_hash":"sha256:cc","created_at":"2026-11-30T00:00:00Z"}]}`))
		default:
			w.Write([]byte(`{}`))
		}
	}
}

func TestOverviewDetail(t *testing.T) {
	h := ui.New(ui.Config{API: detailAPI(200)})
	rec := get(t, h, "/ui/", "kg_admin", "")
	body := rec.Body.String()
	for _, want := range []string{`id="cache">25.0% / 0.0%`, `id="backlog">17`, ">decoy<", "level1/3_matmul", "12.5 s", "last 9 runs"} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview has no %q: %.2000s", want, body)
		}
	}
	if strings.Contains(body, ">forge<") {
		t.Error("a flag never caught is listed")
	}
	rec = get(t, h, "/ui/overview.json", "kg_admin", "")
	var s struct {
		HackFlags   map[string]float64 `json:"hack_flags"`
		Cached      map[string]float64 `json:"cached"`
		SinkBacklog *float64           `json:"sink_backlog"`
		Slowest     *struct {
			Tasks []struct {
				TaskID string `json:"task_id"`
			} `json:"tasks"`
		} `json:"slowest"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.HackFlags["decoy"] != 2 || s.Cached["cache"] != 2 ||
		s.SinkBacklog == nil || *s.SinkBacklog != 17 || s.Slowest == nil || s.Slowest.Tasks[0].TaskID != "level1/3_matmul" {
		t.Errorf("overview.json %s: %v", rec.Body, err)
	}

	// The ranking refused: the rest of the overview still shows, saying what is missing.
	rec = get(t, ui.New(ui.Config{API: detailAPI(500)}), "/ui/", "kg_admin", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "not shown: slowest tasks: no ranking") {
		t.Errorf("%d %.2000s", rec.Code, rec.Body)
	}
}

func TestTasksPageFigures(t *testing.T) {
	rec := get(t, ui.New(ui.Config{API: detailAPI(200)}), "/ui/tasks", "kg_admin", "")
	body := rec.Body.String()
	for _, want := range []string{`class="ref-ms">0.00603 ms`, "0.00374 ms", `class="speedup">1.78×`, "NVIDIA H200, 2026-11-30", "api/x"} {
		if !strings.Contains(body, want) {
			t.Errorf("the tasks page has no %q: %.3000s", want, body)
		}
	}
}
