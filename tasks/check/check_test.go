package check

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
)

// scripted answers by task name: the task check's verdict, then the
// solution's. It records the jobs it saw.
type scripted struct {
	mu   sync.Mutex
	jobs []eval.Job
}

func (s *scripted) Evaluate(_ context.Context, job eval.Job) (eval.Verdict, error) {
	s.mu.Lock()
	s.jobs = append(s.jobs, job)
	s.mu.Unlock()
	i64 := func(n int64) *int64 { return &n }
	info := &eval.TaskInfo{Name: "A task.", Tags: []string{"fp32"}, Depth: "full", FLOPs: i64(2e9),
		InputBytes: i64(1 << 20), ParamBytes: i64(0), OutputBytes: i64(1 << 20),
		Outputs: []eval.OutputSpec{{Shape: []int64{4, 4}, DType: "float32"}}}
	gpu := eval.Verdict{Status: eval.StatusCorrect, TimingMode: eval.TimingGPU, TaskInfo: info,
		RefRuntime: &eval.Runtime{MedianMS: 1.5, P10MS: 1.4, P90MS: 1.6}, Env: eval.Env{GPUName: "NVIDIA H200"}}
	switch name := job.Task.Name; {
	case name == "broken":
		return eval.Verdict{Status: eval.StatusHarnessError, TaskError: "broken.py: reference raised ValueError: x"}, nil
	case name == "unreachable":
		return eval.Verdict{}, errors.New("zygote gone")
	case name == "untagged":
		return eval.Verdict{Status: eval.StatusCorrect, TaskInfo: &eval.TaskInfo{Depth: "full"}}, nil
	case name == "big":
		return eval.Verdict{Status: eval.StatusCorrect, TaskInfo: &eval.TaskInfo{Name: "B.", Tags: []string{"x"}, Depth: "shapes"}}, nil
	case job.TaskCheck:
		return gpu, nil
	case strings.Contains(job.Code, "WRONG"):
		return eval.Verdict{Status: eval.StatusIncorrect, Feedback: "output mismatch\nmore"}, nil
	default:
		sp := 2.0
		return eval.Verdict{Status: eval.StatusCorrect, Speedup: &sp, Runtime: &eval.Runtime{MedianMS: 0.75}}, nil
	}
}

func target(t *testing.T, name, solution string) Target {
	tg := Target{ID: "s/" + name, Level: 1, Task: datasets.Task{Name: name, Path: "/x/s/" + name + ".py", Source: "x"}}
	if solution != "" {
		tg.Solution = t.TempDir() + "/" + name + ".py"
		if err := writeFile(tg.Solution, solution); err != nil {
			t.Fatal(err)
		}
	}
	return tg
}

func TestRun(t *testing.T) {
	ev := &scripted{}
	targets := []Target{
		target(t, "good", "GOOD"), target(t, "wrongsol", "WRONG"), target(t, "broken", "GOOD"),
		target(t, "unreachable", ""), target(t, "untagged", ""), target(t, "big", "GOOD"),
	}
	res, err := Run(context.Background(), ev, targets, Options{Depth: "auto", Concurrency: 3, Solutions: true})
	if err != nil || len(res) != len(targets) {
		t.Fatalf("Run: %d results, %v", len(res), err)
	}
	by := map[string]Result{}
	for _, r := range res {
		by[r.Task.Name] = r
	}
	if r := by["good"]; !r.OK() || r.Solution == nil || *r.Solution.Speedup != 2 || len(r.Warnings) != 0 {
		t.Errorf("good: %+v", r)
	}
	if r := by["wrongsol"]; r.OK() || !strings.Contains(r.Problems[0], "wrongsol.py is incorrect: output mismatch") {
		t.Errorf("wrong solution: %q", r.Problems)
	}
	if r := by["broken"]; r.OK() || r.Problems[0] != "broken.py: reference raised ValueError: x" || r.Solution != nil {
		t.Errorf("broken: %+v", r)
	}
	if r := by["unreachable"]; r.OK() || !strings.Contains(r.Problems[0], "zygote gone") {
		t.Errorf("unreachable: %q", r.Problems)
	}
	if r := by["untagged"]; !r.OK() || len(r.Warnings) != 1 {
		t.Errorf("untagged: %+v", r)
	}
	if r := by["big"]; !r.OK() || r.Solution != nil || !strings.Contains(r.SolutionNote, "shape level") {
		t.Errorf("big: %+v", r)
	}
	for _, j := range ev.jobs {
		if j.TaskCheck && (j.Check == nil || j.Check.Depth != "auto") {
			t.Errorf("task check job without the depth: %+v", j.Check)
		}
	}
}

func TestEntry(t *testing.T) {
	ev := &scripted{}
	tg := target(t, "good", "GOOD")
	res, _ := Run(context.Background(), ev, []Target{tg}, Options{Solutions: true})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e := Entry(res[0], now)
	if e.ID != "s/good" || e.Name != "A task." || e.DType != "float32" || *e.GFLOP != 2 || *e.MB != 2 || !strings.HasSuffix(e.Solution, "/good.py") {
		t.Errorf("entry %+v", e)
	}
	if e.GPU == nil || e.GPU.Name != "NVIDIA H200" || e.GPU.RefMS != 1.5 || *e.GPU.SolutionSpeedup != 2 ||
		*e.GPU.SolutionMS != 0.75 || e.GPU.MeasuredAt != "2026-11-30" {
		t.Errorf("gpu %+v", e.GPU)
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, &scripted{}, []Target{target(t, "good", "")}, Options{})
	if !errors.Is(err, context.Canceled) || len(res) != 0 {
		t.Errorf("cancelled run: %d results, %v", len(res), err)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func TestResultJSON(t *testing.T) {
	res, _ := Run(context.Background(), &scripted{}, []Target{target(t, "broken", "")}, Options{})
	b, err := json.Marshal(res[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	if got["id"] != "s/broken" || got["ok"] != false || got["path"] != "/x/s/broken.py" || got["source"] != nil ||
		len(got["problems"].([]any)) != 1 {
		t.Errorf("json %s", b)
	}
}

// The memory limit sent with a task check: --max-mb over the suite's
// suite.json over the harness's default (0 in the job).
func TestMaxMB(t *testing.T) {
	tests := []struct {
		name        string
		suite, flag float64
		want        float64
	}{
		{"defaults", 0, 0, 0},
		{"suite", 16384, 0, 16384},
		{"flag", 0, 2048, 2048},
		{"flag over suite", 16384, 2048, 2048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &scripted{}
			tg := target(t, "good", "")
			tg.MaxMB = tt.suite
			if _, err := Run(context.Background(), ev, []Target{tg}, Options{Depth: "auto", MaxMB: tt.flag}); err != nil {
				t.Fatal(err)
			}
			if len(ev.jobs) != 1 || ev.jobs[0].Check == nil || ev.jobs[0].Check.MaxMB != tt.want {
				t.Fatalf("jobs %+v; want max_mb %g", ev.jobs, tt.want)
			}
		})
	}
}

func TestTargetsCarryTheSuiteLimit(t *testing.T) {
	suites := []datasets.Suite{
		{Name: "heavy", Settings: datasets.Settings{MaxMB: 16384}, Tasks: []datasets.Task{{Name: "1_a"}}},
		{Name: "level1", Level: 1, Tasks: []datasets.Task{{Name: "1_b"}}},
	}
	got := Targets(suites)
	if len(got) != 2 || got[0].ID != "heavy/1_a" || got[0].MaxMB != 16384 || got[1].MaxMB != 0 || got[1].Level != 1 {
		t.Errorf("targets %+v", got)
	}
}
