package export

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// roundTrip writes rows to a part file and reads them back.
func roundTrip[T any](t *testing.T, rows []T) []T {
	t.Helper()
	dir := t.TempDir()
	if err := writePart(dir, "p.parquet", rows, map[string]string{MetaSchemaVersion: SchemaVersion}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRows[T](filepath.Join(dir, "p.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestEvaluationRoundTrip(t *testing.T) {
	minimal := event.Evaluation{EventID: "e2", Time: testTime, EvalID: "x", Code: "c",
		Verdict: eval.Verdict{SchemaVersion: "1.0", Status: eval.StatusCompileError, TimingMode: eval.TimingCPUInterpreter,
			Feedback: "SyntaxError", ErrorSignature: "SyntaxError: invalid syntax"}}
	tests := []struct {
		name string
		ev   event.Evaluation
	}{
		{"full verdict", evalEvent("e1", testTime)},
		{"nulls and nil lists", minimal},
		{"non-UTC time", evalEvent("e3", testTime.In(time.FixedZone("X", 5*3600)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := EvaluationRow(tt.ev)
			got := roundTrip(t, []Evaluation{want})
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestEvaluationRowFlattens(t *testing.T) {
	ev := evalEvent("e1", testTime)
	r := EvaluationRow(ev)
	checks := []struct {
		name      string
		got, want any
	}{
		{"ts is UTC millis", r.TS, time.Date(2026, 11, 29, 23, 59, 58, 123000000, time.UTC)},
		{"runtime median", *r.RuntimeMedianMS, 0.91},
		{"runtime iterations", *r.RuntimeIterations, int64(120)},
		{"ref before", *r.RefBeforeMedianMS, 1.20},
		{"atol", *r.Atol, 1e-4},
		{"tol dtype", r.TolDType, "float32"},
		{"sm clock", *r.SMClockMHzAfter, 1980},
		{"sm clock copied, not aliased", r.SMClockMHzAfter != ev.Verdict.Env.SMClockMHzAfter, true},
		{"stage_times sorted by stage", r.StageTimes, []StageTime{{"fork", 3.1}, {"timing", 2400}, {"total", 3300}}},
		{"task name from verdict", r.TaskName, "19_gemm_relu"},
		{"exec ms", *r.ExecMS, 3300.0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	empty := EvaluationRow(event.Evaluation{})
	if empty.RuntimeMedianMS != nil || empty.Atol != nil || empty.HackFlags == nil || empty.StageTimes == nil {
		t.Errorf("empty verdict row: %+v", empty)
	}
}

func TestEpisodeStepAndRejectedRoundTrip(t *testing.T) {
	steps := []EpisodeStep{EpisodeStepRow(stepEvent("s1", testTime)), EpisodeStepRow(event.EpisodeStep{EventID: "s2", Time: testTime})}
	if got := roundTrip(t, steps); !reflect.DeepEqual(got, steps) {
		t.Fatalf("episode steps:\n got %+v\nwant %+v", got, steps)
	}
	rej := []Rejected{{EventID: "r1", TS: rowTime(testTime), Subject: event.SubjectEvaluation, Data: []byte{0xff, '{'}, Error: "bad", NumDelivered: 2}}
	if got := roundTrip(t, rej); !reflect.DeepEqual(got, rej) {
		t.Fatalf("rejected:\n got %+v\nwant %+v", got, rej)
	}
}

func TestFileMetadata(t *testing.T) {
	dir := t.TempDir()
	rows := []Evaluation{EvaluationRow(evalEvent("e1", testTime))}
	if err := writePart(dir, "p.parquet", rows, map[string]string{MetaSchemaVersion: SchemaVersion, MetaTable: TableEvaluations}); err != nil {
		t.Fatal(err)
	}
	pf := openTestParquet(t, filepath.Join(dir, "p.parquet"))
	for k, want := range map[string]string{MetaSchemaVersion: SchemaVersion, MetaTable: TableEvaluations} {
		if v, ok := pf.Lookup(k); !ok || v != want {
			t.Errorf("metadata %s = %q (%v), want %q", k, v, ok, want)
		}
	}
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); c != "ZSTD" {
		t.Errorf("codec %s, want ZSTD", c)
	}
}

// The table schemas are a contract with every reader (pyarrow, DuckDB,
// the exporters): a change must show up in review as a golden diff.
func TestSchemaGolden(t *testing.T) {
	tests := []struct {
		file string
		row  any
	}{
		{"evaluations.schema.golden", Evaluation{}},
		{"episode_steps.schema.golden", EpisodeStep{}},
		{"rejected.schema.golden", Rejected{}},
		{"skills.schema.golden", Skill{}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := parquet.SchemaOf(tt.row).String() + "\n"
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./export -run TestSchemaGolden -update)", err)
			}
			if got != string(want) {
				t.Fatalf("schema changed; if deliberate, bump SchemaVersion as needed and run with -update.\n got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A file of schema 1.2 (stage_ms a MAP) still reads as evaluations: the old
// column is ignored, stage_times is empty.
func TestSchema12FilesStillRead(t *testing.T) {
	type v12 struct {
		EventID string             `parquet:"event_id"`
		EvalID  string             `parquet:"eval_id"`
		StageMS map[string]float64 `parquet:"stage_ms"`
	}
	dir := t.TempDir()
	if err := writePart(dir, "old.parquet", []v12{{EventID: "e1", EvalID: "e1", StageMS: map[string]float64{"total": 5}}}, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadRows[Evaluation](filepath.Join(dir, "old.parquet"))
	if err != nil || len(rows) != 1 || rows[0].EvalID != "e1" || len(rows[0].StageTimes) != 0 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
}
