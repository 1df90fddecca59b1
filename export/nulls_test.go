package export

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// leafValues reads the first row of the Parquet file at path as its leaf
// columns (dotted paths) and their values, as a reader of the file sees
// them: a null is a null, whatever the Go row held.
func leafValues(t *testing.T, path string) map[string]parquet.Value {
	t.Helper()
	pf := openTestParquet(t, path)
	var names []string
	for _, c := range pf.Schema().Columns() {
		names = append(names, strings.Join(c, "."))
	}
	rows := pf.RowGroups()[0].Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 1)
	if n, err := rows.ReadRows(buf); n != 1 && !errors.Is(err, io.EOF) {
		t.Fatalf("read %d rows: %v", n, err)
	}
	out := map[string]parquet.Value{}
	for _, v := range buf[0] {
		out[names[v.Column()]] = v
	}
	return out
}

// A value the event does not know is written as null, not "": a reader
// filters on IS NULL and never needs NULLIF.
func TestUnknownIsNull(t *testing.T) {
	// A verdict made without a child (a deadline stop): no env, no output,
	// no tolerance; an inline task, no request id, no API key.
	ev := event.Evaluation{EventID: "e1", Time: testTime, EvalID: "b-00000", BatchID: "b", Code: "c", RewardFn: "binary",
		Verdict: eval.Verdict{SchemaVersion: eval.SchemaVersion, Status: eval.StatusHarnessError, TimingMode: eval.TimingCPUInterpreter,
			TaskHash: "sha256:t", CodeHash: "sha256:c"}}
	dir := t.TempDir()
	if err := writePart(dir, "p.parquet", []Evaluation{EvaluationRow(ev)}, nil); err != nil {
		t.Fatal(err)
	}
	got := leafValues(t, filepath.Join(dir, "p.parquet"))
	unknown := []string{"request_id", "client_id", "task_id", "task_name", "tol_dtype", "tol_source",
		"feedback", "error_signature", "task_error", "output_tail", "task_source",
		"device", "gpu_name", "gpu_uuid", "driver", "python", "torch", "triton", "harness_version", "sandbox", "sandbox_detail"}
	for _, c := range unknown {
		if v, ok := got[c]; !ok || !v.IsNull() {
			t.Errorf("%s = %v (present %v), want null", c, v, ok)
		}
	}
	// What is known stays a value, "" included where it is the value.
	for _, c := range []string{"event_id", "eval_id", "batch_id", "task_hash", "code", "status", "reward_fn"} {
		if v := got[c]; v.IsNull() {
			t.Errorf("%s is null", c)
		}
	}
	// Every optional string column of the table is listed above or known
	// to carry a value: a column made optional later is checked here too.
	for _, c := range parquet.SchemaOf(Evaluation{}).Fields() {
		if c.Leaf() && c.Optional() && c.Type().Kind() == parquet.ByteArray &&
			!slices.Contains(unknown, c.Name()) && !slices.Contains([]string{"completion", "source_eval_id", "retry"}, c.Name()) {
			t.Errorf("optional string column %s: not checked for null", c.Name())
		}
	}

	step := EpisodeStepRow(event.EpisodeStep{EventID: "s1", Time: testTime, EpisodeID: "ep", Turn: 1, TaskID: "ci/a"})
	if err := writePart(dir, "s.parquet", []EpisodeStep{step}, nil); err != nil {
		t.Fatal(err)
	}
	if v := leafValues(t, filepath.Join(dir, "s.parquet"))["client_id"]; !v.IsNull() {
		t.Errorf("episode_steps.client_id = %v, want null", v)
	}
}

// testdata/evaluations-1.4.parquet was written by the schema 1.4 sink
// (writePart of EvaluationRow): a correct row with every column known, a
// deadline stop of an inline task with "" for what was not known, and an
// incorrect row. It reads into today's row: the 1.4 "" reads as "", a column
// it lacks as its zero (valid: nil, not known).
func TestSchema14FileStillReads(t *testing.T) {
	rows, err := ReadRows[Evaluation](filepath.Join("testdata", "evaluations-1.4.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.EvalID)
	}
	if want := []string{"old-correct", "old-deadline", "old-wrong"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("rows %v, want %v", ids, want)
	}
	full, dl := rows[0], rows[1]
	if full.RequestID != "r1" || full.ClientID != "key1" || full.GPUName != "NVIDIA H200" || full.TaskID != "ci/a" ||
		full.Speedup == nil || *full.Speedup != 1.31 || full.TolSource != "default" || len(full.StageTimes) != 3 {
		t.Errorf("1.4 full row %+v", full)
	}
	if dl.TaskID != "" || dl.RequestID != "" || dl.GPUName != "" || dl.Status != string(eval.StatusHarnessError) ||
		!strings.Contains(dl.Feedback, "deadline") {
		t.Errorf("1.4 deadline row %+v", dl)
	}
	// Rewritten by today's writer, the row's unknowns become nulls.
	dir := t.TempDir()
	if err := writePart(dir, "p.parquet", rows[1:2], nil); err != nil {
		t.Fatal(err)
	}
	got := leafValues(t, filepath.Join(dir, "p.parquet"))
	for _, c := range []string{"task_id", "request_id", "gpu_name", "error_signature"} {
		if !got[c].IsNull() {
			t.Errorf("rewritten 1.4 row: %s = %v, want null", c, got[c])
		}
	}
}

// Unknown values are null wherever they fall in a part: parquet-go's batch
// writer put some "" of an optional string down as values (rows 62 and 63 of
// 65, with every other row set), which WriteRows avoids.
func TestUnknownIsNullAcrossABatch(t *testing.T) {
	dir := t.TempDir()
	var rows []Evaluation
	for i := range 65 {
		ev := evalEvent(fmt.Sprint("e", i), testTime)
		ev.Verdict.Feedback = "feedback"
		if i == 30 || i >= 62 {
			ev.Verdict.Feedback = ""
		}
		rows = append(rows, EvaluationRow(ev))
	}
	if err := writePart(dir, "p.parquet", rows, nil); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.ReadFile[struct {
		Feedback *string `parquet:"feedback,optional"`
	}](filepath.Join(dir, "p.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if (r.Feedback == nil) != (i == 30 || i >= 62) {
			t.Errorf("row %d: feedback %v", i, r.Feedback)
		}
	}
}
