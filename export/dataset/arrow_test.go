package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
)

func TestArrowReadsBack(t *testing.T) {
	dir := sampleLog(t)
	out, m := runExport(t, dir, Request{Format: "arrow", Task: []string{"ci/a"}})
	// e6, a harness error, is a sample the API said to drop: counted, not written.
	if m.Files["evaluations.arrow"] != 5 || m.Skipped[SkipInvalid] != 1 || len(m.Files) != 1 {
		t.Fatalf("files %+v", m.Files)
	}
	if _, ok := m.Files["skills.arrow"]; ok {
		t.Error("skills.arrow without a skills table")
	}
	r := openArrow(t, filepath.Join(out, "evaluations.arrow"))
	if ids := arrowColumn(t, filepath.Join(out, "evaluations.arrow"), "eval_id"); len(ids) != 5 || ids[0] != "e1" {
		t.Errorf("ids %v, want 5 rows from e1", ids)
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
	// A table no row of which matched is not written, and the manifest says so.
	if !slices.Equal(m.Empty, []string{"episode_steps.arrow", "rejected.arrow"}) {
		t.Errorf("empty %v", m.Empty)
	}
	for _, name := range m.Empty {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s written: %v", name, err)
		}
		if _, ok := m.Files[name]; ok {
			t.Errorf("%s in files %v", name, m.Files)
		}
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

// openArrow opens the Arrow IPC file at path for the test's length.
func openArrow(t *testing.T, path string) *ipc.FileReader {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	r, err := ipc.NewFileReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// arrowColumn reads the string column name of every record of the Arrow
// IPC file at path.
func arrowColumn(t *testing.T, path, name string) []string {
	t.Helper()
	r := openArrow(t, path)
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

// A status filter applies to the tables whose status is of its kind and
// leaves the others whole, and the manifest says which filters selected
// each file.
func TestArrowStatusFilterIsConsistent(t *testing.T) {
	dir := sampleLog(t)
	logEvents(t, dir, "w2",
		logged{event.SubjectSearchStep, "s_1.1", event.SearchStep{EventID: "s_1.1", Time: t0, SearchID: "s_1", Seq: 1, TaskID: "ci/a", Action: "large", Error: "no code"}},
		logged{event.SubjectSearch, "s_1.done.1", event.Search{EventID: "s_1.done.1", Time: t0, SearchID: "s_1", TaskID: "ci/a", State: "done", Steps: 1}},
		logged{event.SubjectLLMCall, "c1", event.LLMCall{EventID: "c1", Time: t0, CallID: "c1", SearchID: "s_1", Purpose: "propose"}},
		logged{event.SubjectSkill, "k1", export.SkillEvent{EventID: "k1", Time: t0, Reason: "created", Skill: export.Skill{SkillID: "k1", Version: 1, Status: export.SkillActive, LastSeen: t0, FirstSeen: t0}}},
	)
	_, m := runExport(t, dir, Request{Format: "arrow", Status: []string{"correct"}})
	// evaluations: e1 e2 e3 e4 e7 e8 e9 are correct; the failed search step
	// has no status; searches, llm_calls and skills are whole.
	want := map[string]int64{"evaluations.arrow": 7, "searches.arrow": 1, "llm_calls.arrow": 1, "skills.arrow": 1}
	if !reflect.DeepEqual(m.Files, want) {
		t.Errorf("files %v, want %v", m.Files, want)
	}
	applied := map[string][]string{
		"evaluations.arrow": {"status", "valid"}, "episode_steps.arrow": {"status"}, "rejected.arrow": {},
		"search_steps.arrow": {"status"}, "searches.arrow": {}, "llm_calls.arrow": {}, "skills.arrow": {},
	}
	if !reflect.DeepEqual(m.FiltersApplied, applied) {
		t.Errorf("filters_applied %v, want %v", m.FiltersApplied, applied)
	}
	// A skill's status filters skills only.
	_, m = runExport(t, dir, Request{Format: "arrow", Status: []string{"retired"}, IncludeInvalid: true})
	if m.Files["evaluations.arrow"] != 9 || m.Files["skills.arrow"] != 0 || !slices.Contains(m.Empty, "skills.arrow") ||
		!reflect.DeepEqual(m.FiltersApplied["skills.arrow"], []string{"status"}) || len(m.FiltersApplied["evaluations.arrow"]) != 0 {
		t.Errorf("retired: files %v empty %v applied %v", m.Files, m.Empty, m.FiltersApplied)
	}
	for _, r := range []Request{{Format: "skills", Status: []string{"correct"}}, {Format: "sft", Status: []string{"active"}}} {
		if _, err := r.Parse(); err == nil {
			t.Errorf("%s --status %s accepted: it matches no row of the format's kind", r.Format, r.Status[0])
		}
	}
}
