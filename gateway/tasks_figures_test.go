package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

// A suite task's GPU figures (tasks.WithFigures) come with it in the list
// and alone; a task without figures has no gpu field at all.
func TestTaskFigures(t *testing.T) {
	kgtest.SchemaMatches(t, loadSpec(t), "TaskGPU", reflect.TypeFor[datasets.GPURun]())
	speed := 1.75
	with := tasks.New("ci/fast", "a", tasks.OriginSuite, time.Now())
	with.GPU = &datasets.GPURun{Name: "NVIDIA H200", RefMS: 0.006, RefP10MS: 0.005, RefP90MS: 0.007, SolutionSpeedup: &speed, MeasuredAt: "2026-11-30"}
	reg, err := tasks.NewRegistry([]tasks.Task{with, tasks.New("ci/plain", "b", tasks.OriginSuite, time.Now())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{}, Deps{Tasks: reg, Log: kgtest.Logger(t)}).Handler()
	rec := request(t, h, "GET", "/v1/tasks", "", nil)
	checkSpec(t, "GET", "/v1/tasks", rec)
	var l struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Tasks) != 2 {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	var g datasets.GPURun
	if err := json.Unmarshal(l.Tasks[0]["gpu"], &g); err != nil || g.RefMS != 0.006 || g.SolutionSpeedup == nil || *g.SolutionSpeedup != 1.75 {
		t.Errorf("ci/fast's gpu %s: %v", l.Tasks[0]["gpu"], err)
	}
	if _, ok := l.Tasks[1]["gpu"]; ok {
		t.Errorf("ci/plain has a gpu field: %s", l.Tasks[1]["gpu"])
	}
	rec = request(t, h, "GET", "/v1/tasks/ci/fast", "", nil)
	checkSpec(t, "GET", "/v1/tasks/{id}", rec)
	var one taskView
	if err := json.Unmarshal(rec.Body.Bytes(), &one); err != nil || one.GPU == nil || one.GPU.Name != "NVIDIA H200" {
		t.Errorf("GET ci/fast: %s: %v", rec.Body, err)
	}
}
