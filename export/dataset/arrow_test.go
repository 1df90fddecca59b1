package dataset

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/kernelgate/kernelgate/event"
)

func TestArrowReadsBack(t *testing.T) {
	dir := sampleLog(t)
	out, m := runExport(t, dir, Request{Format: "arrow", Task: []string{"ci/a"}})
	// e6, a harness error, is a sample the API said to drop: counted, not written.
	if m.Files["evaluations.arrow"] != 5 || m.Skipped[SkipInvalid] != 1 || m.Files["episode_steps.arrow"] != 0 || m.Files["rejected.arrow"] != 0 {
		t.Fatalf("files %+v", m.Files)
	}
	if _, ok := m.Files["skills.arrow"]; ok {
		t.Error("skills.arrow without a skills table")
	}
	fh, err := os.Open(filepath.Join(out, "evaluations.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := ipc.NewFileReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int64
	var ids []string
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
		col := rec.Column(rec.Schema().FieldIndices("eval_id")[0]).(*array.String)
		for j := 0; j < col.Len(); j++ {
			ids = append(ids, col.Value(j))
		}
	}
	if n != 5 || ids[0] != "e1" {
		t.Errorf("rows %d ids %v", n, ids)
	}
	for _, c := range []struct {
		name string
		id   arrow.Type
	}{{"task_source", arrow.STRING}, {"ts", arrow.TIMESTAMP}, {"speedup", arrow.FLOAT64}, {"hack_flags", arrow.LIST}, {"stage_times", arrow.LIST}} {
		f, ok := r.Schema().FieldsByName(c.name)
		if !ok || f[0].Type.ID() != c.id {
			t.Errorf("column %s: %v, want %s", c.name, f, c.id)
		}
	}
	// An empty table is a valid file with the schema.
	fe, err := os.Open(filepath.Join(out, "rejected.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	re, err := ipc.NewFileReader(fe)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if _, ok := re.Schema().FieldsByName("data"); !ok {
		t.Errorf("rejected.arrow schema %s", re.Schema())
	}
}

// The search's tables go into the Arrow export where the log has them.
func TestArrowHasTheSearchTables(t *testing.T) {
	dir := sampleLog(t)
	logEvents(t, dir, "w2",
		logged{event.SubjectSearchStep, "s_1.1", event.SearchStep{EventID: "s_1.1", Time: t0, SearchID: "s_1", Seq: 1, TaskID: "ci/a", Action: "large", Error: "no code"}},
		logged{event.SubjectSearch, "s_1.running.0", event.Search{EventID: "s_1.running.0", Time: t0, SearchID: "s_1", TaskID: "ci/a", State: "running"}},
		logged{event.SubjectSearch, "s_1.done.1", event.Search{EventID: "s_1.done.1", Time: t0.Add(time.Minute), SearchID: "s_1", TaskID: "ci/a", State: "done", Steps: 1}},
	)
	_, m := runExport(t, dir, Request{Format: "arrow"})
	if m.Files["search_steps.arrow"] != 1 || m.Files["searches.arrow"] != 2 {
		t.Fatalf("files %+v", m.Files)
	}
	_, m = runExport(t, dir, Request{Format: "arrow", Since: t0.Add(30 * time.Second).Format(time.RFC3339)})
	if m.Files["searches.arrow"] != 1 || m.Files["search_steps.arrow"] != 0 {
		t.Fatalf("since: files %+v", m.Files)
	}
}

// arrowColumn reads the string column name of every record of the Arrow
// IPC file at path.
func arrowColumn(t *testing.T, path, name string) []string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := ipc.NewFileReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		col := rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.String)
		for j := 0; j < col.Len(); j++ {
			out = append(out, col.Value(j))
		}
	}
	return out
}
