package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

const (
	srcA = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
	srcB = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
)

var suite = []tasks.Task{
	tasks.New("ci/a", srcA, tasks.OriginSuite, t0),
	tasks.New("level2/b", srcB, tasks.OriginSuite, t0),
}

// ev is one evaluation of task (ci/a or level2/b) with code, a status and
// a speedup (0: null), logged at t0+min minutes.
type ev struct {
	id, task, code string
	status         eval.Status
	speedup        float64
	min            int
	cached         bool
	noSource       bool // logged before task_source existed
	completion     string
	prompt         []event.PromptMessage
	batch          string
	valid          *bool  // the API's valid (nil: not said, judged by the reward function)
	retry          string // the verdict's retry
	taskError      string
	inline         bool // an inline reference: no task id
}

func (e ev) event() event.Evaluation {
	src := srcA
	if e.task == "level2/b" {
		src = srcB
	}
	v := eval.Verdict{SchemaVersion: eval.SchemaVersion, Status: e.status, Correct: e.status == eval.StatusCorrect,
		Compiled: true, TaskHash: eval.HashSource(src), CodeHash: eval.HashSource(e.code), TaskName: e.task}
	if e.speedup != 0 {
		v.Speedup = ptr(e.speedup)
	}
	ee := event.Evaluation{EventID: e.id, Time: t0.Add(time.Duration(e.min) * time.Minute), EvalID: e.id,
		TaskID: e.task, TaskSource: src, Code: e.code, Cached: e.cached, Verdict: v}
	if e.noSource {
		ee.TaskSource = ""
	}
	if e.completion != "" {
		ee.Completion = &e.completion
	}
	ee.Prompt, ee.BatchID, ee.Valid = e.prompt, e.batch, e.valid
	ee.Verdict.Retry, ee.Verdict.TaskError = e.retry, e.taskError
	if e.inline {
		ee.TaskID = ""
	}
	return ee
}

// writeLog logs evs through the real sink under dataDir/parquet.
func writeLog(t *testing.T, dataDir string, evs ...ev) {
	t.Helper()
	var out []logged
	for _, e := range evs {
		out = append(out, logged{event.SubjectEvaluation, e.id, e.event()})
	}
	logEvents(t, dataDir, "w1", out...)
}

// logged is one event for logEvents: its subject, its bus id and its body.
type logged struct {
	subject, id string
	body        any
}

// logEvents logs evs as one batch through the real sink under
// dataDir/parquet, as writer (its part files' names).
func logEvents(t *testing.T, dataDir, writer string, evs ...logged) {
	t.Helper()
	s, err := export.NewSink(filepath.Join(dataDir, LogDir), writer, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	var batch []bus.Event
	for _, e := range evs {
		data, err := json.Marshal(e.body)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, bus.Event{ID: e.id, Subject: e.subject, Data: data, NumDelivered: 1})
	}
	if err := s.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
}

func spec(t *testing.T, r Request) Spec {
	t.Helper()
	s, err := r.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// export runs r over dataDir into a new directory and returns it and the manifest.
func runExport(t *testing.T, dataDir string, r Request) (string, *Manifest) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	m, err := Write(t.Context(), spec(t, r), Source{DataDir: dataDir, Tasks: suite, Version: "test"}, out, false)
	if err != nil {
		t.Fatal(err)
	}
	var disk Manifest
	data, err := os.ReadFile(filepath.Join(out, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &disk); err != nil {
		t.Fatal(err)
	}
	if disk.Rows != m.Rows || disk.Format != m.Format || disk.SchemaVersion != SchemaVersion || disk.KernelgateVersion != "test" {
		t.Fatalf("manifest on disk %+v, returned %+v", disk, m)
	}
	return out, m
}

func read[T any](t *testing.T, path string) []T {
	t.Helper()
	rows, err := export.ReadRows[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
