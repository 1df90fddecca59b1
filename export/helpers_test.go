package export

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

var testTime = time.Date(2026, 11, 29, 23, 59, 58, 123456789, time.UTC)

// fullVerdict has every optional field set.
func fullVerdict() eval.Verdict {
	f := func(v float64) *float64 { return &v }
	clk := 1980
	rt := func(m float64) *eval.Runtime {
		return &eval.Runtime{MedianMS: m, P10MS: m - 0.01, P90MS: m + 0.02, MinMS: m - 0.02, MaxMS: m + 0.2, MeanMS: m, Spread: 1.03, Iterations: 120}
	}
	return eval.Verdict{
		SchemaVersion: eval.SchemaVersion, Status: eval.StatusCorrect, Compiled: true, Correct: true,
		Speedup: f(1.31), Runtime: rt(0.91), RefRuntime: rt(1.19), RefRuntimeBefore: rt(1.20), RefRuntimeAfter: rt(1.19),
		TimingMode: eval.TimingGPU, MaxAbsError: f(3.1e-6), MaxRelError: f(2.2e-5),
		Tolerance:    &eval.Tolerance{Atol: 1e-4, Rtol: 1e-4, DType: "float32", Source: "default"},
		TrialsPassed: 5, TrialsTotal: 5, HackFlags: []string{}, Warnings: []string{"static: uses torch.matmul"},
		TritonLaunches: 10, Coverage: f(0.98), StageMS: map[string]float64{"fork": 3.1, "timing": 2400, "total": 3300},
		Env: eval.Env{Device: "cuda:0", GPUName: "NVIDIA H200", GPUUUID: "GPU-1", SMClockMHzBefore: &clk, SMClockMHzAfter: &clk,
			Driver: "580.159.04", Python: "3.12.3", Torch: "2.11.0", Triton: "3.6.0", HarnessVersion: "0.1.0", Sandbox: "full"},
		TaskName: "19_gemm_relu", TaskHash: "sha256:t", CodeHash: "sha256:c",
	}
}

func evalEvent(id string, ts time.Time) event.Evaluation {
	completion, reward, wait, exec := "```python\ncode\n```", 0.72, 1.5, 3300.0
	return event.Evaluation{
		EventID: id, Time: ts, EvalID: "eval-" + id, BatchID: "b1", RequestID: "r1", ClientID: "key1", TaskID: "19",
		Code: "code", Completion: &completion, RewardFn: "adaexplore", Reward: &reward,
		QueueWaitMS: &wait, ExecMS: &exec, Verdict: fullVerdict(),
	}
}

func stepEvent(id string, ts time.Time) event.EpisodeStep {
	sp := 1.2
	return event.EpisodeStep{EventID: id, Time: ts, EpisodeID: "ep1", Turn: 2, ClientID: "key1", TaskID: "19",
		Completion: "text", Observation: "feedback", Reward: 0.5, EvalID: "eval-9", Status: "correct", Speedup: &sp}
}

func busEvent(t *testing.T, subject, id string, v any) bus.Event {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bus.Event{ID: id, Subject: subject, Data: data, NumDelivered: 1}
}

// listFiles returns every file under root, relative, sorted.
func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// readTable reads every row of table under root (all dates, file order).
func readTable[T any](t *testing.T, root, table string) []T {
	t.Helper()
	var all []T
	for _, f := range listFiles(t, root) {
		if !strings.HasPrefix(f, "table="+table+"/") || strings.HasPrefix(filepath.Base(f), ".") {
			continue // another table, or a temp file (readers skip hidden files)
		}
		rows, err := ReadRows[T](filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

func newTestSink(t *testing.T, root string, opts ...Option) *Sink {
	t.Helper()
	s, err := NewSink(root, "w1", kgtest.Logger(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
