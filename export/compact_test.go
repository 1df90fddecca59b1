package export

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeParts writes n parts of k evaluation rows each into table/date under
// root, written at consecutive times; it returns every row in write order.
func writeParts(t *testing.T, root, date string, n, k int, t0 time.Time) []Evaluation {
	t.Helper()
	dir := partDir(root, TableEvaluations, date)
	var all []Evaluation
	for i := range n {
		var rows []Evaluation
		for j := range k {
			rows = append(rows, EvaluationRow(evalEvent(fmt.Sprintf("%s-%d-%d", date, i, j), testTime)))
		}
		// writers whose names sort against their write order
		name := partName(fmt.Sprintf("w%d", n-i), t0.Add(time.Duration(i)*time.Second), uint64(i))
		if err := writePart(dir, name, rows, map[string]string{MetaSchemaVersion: SchemaVersion, MetaTable: TableEvaluations}); err != nil {
			t.Fatal(err)
		}
		all = append(all, rows...)
	}
	return all
}

// partRows reads a partition's visible parts in write order.
func partRows(t *testing.T, dir string) ([]Evaluation, []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type named struct {
		name string
		at   time.Time
	}
	var parts []named
	for _, e := range entries {
		if at, ok := partTime(e.Name()); ok {
			parts = append(parts, named{e.Name(), at})
		}
	}
	slices.SortFunc(parts, func(a, b named) int { return a.at.Compare(b.at) })
	var rows []Evaluation
	var names []string
	for _, p := range parts {
		got, err := ReadRows[Evaluation](filepath.Join(dir, p.name))
		if err != nil {
			t.Fatal(err)
		}
		rows, names = append(rows, got...), append(names, p.name)
	}
	return rows, names
}

func TestCompactLeavesOneFilePerPartitionWithTheSameRows(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	want := map[string][]Evaluation{
		"2026-11-29": writeParts(t, root, "2026-11-29", 7, 3, t0),
		"2026-11-30": writeParts(t, root, "2026-11-30", 2, 5, t0.Add(time.Hour)),
		"2026-12-01": writeParts(t, root, "2026-12-01", 3, 2, t0.Add(2*time.Hour)),
	}
	var seen []string
	got, err := Compact(root, CompactOptions{Before: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		func(pc PartitionCompaction) { seen = append(seen, pc.Dir) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].FilesBefore != 7 || got[0].FilesAfter != 1 || got[0].Rows != 21 ||
		got[1].FilesBefore != 2 || got[1].FilesAfter != 1 || !reflect.DeepEqual(seen, []string{got[0].Dir, got[1].Dir}) {
		t.Fatalf("compactions %+v, progress %v", got, seen)
	}
	if got[0].BytesAfter >= got[0].BytesBefore {
		t.Errorf("7 small parts took %d bytes, compacted %d", got[0].BytesBefore, got[0].BytesAfter)
	}
	for date, rows := range want {
		dir := partDir(root, TableEvaluations, date)
		after, names := partRows(t, dir)
		if !reflect.DeepEqual(after, rows) {
			t.Errorf("%s: rows changed (%d before, %d after)", date, len(rows), len(after))
		}
		wantFiles := 1
		if date == "2026-12-01" {
			wantFiles = 3 // today's partition: not before the cut-off, untouched
		}
		if len(names) != wantFiles {
			t.Errorf("%s: files %v", date, names)
		}
		if hidden, _ := filepath.Glob(filepath.Join(dir, ".*")); len(hidden) > 0 {
			t.Errorf("%s: left %v", date, hidden)
		}
	}
	// The compacted file keeps the metadata and the newest input's write time.
	_, names := partRows(t, partDir(root, TableEvaluations, "2026-11-29"))
	if at, _ := partTime(names[0]); !at.Equal(t0.Add(6*time.Second)) || !strings.HasPrefix(names[0], "part-compact-") {
		t.Errorf("compacted file %s", names[0])
	}
	// Compacting again changes nothing; new parts join the compacted file.
	again, err := Compact(root, CompactOptions{Before: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, nil)
	if err != nil || again[0].FilesBefore != 1 || again[0].FilesAfter != 1 {
		t.Fatalf("second compaction %+v %v", again, err)
	}
	more := writeParts(t, root, "2026-11-29", 2, 1, t0.Add(time.Minute))
	if _, err := Compact(root, CompactOptions{Tables: []string{TableEvaluations}}, nil); err != nil {
		t.Fatal(err)
	}
	after, names := partRows(t, partDir(root, TableEvaluations, "2026-11-29"))
	if len(names) != 1 || !reflect.DeepEqual(after, append(want["2026-11-29"], more...)) {
		t.Errorf("after new parts: %d rows in %v", len(after), names)
	}
}

// A compaction cut short between its rename and the removal of its parts:
// readers skip the parts its marker names, and the next run finishes.
func TestCompactionCutShortIsFinishedAndHidesNoRowTwice(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	rows := writeParts(t, root, "2026-11-29", 3, 2, t0)
	dir := partDir(root, TableEvaluations, "2026-11-29")
	_, inputs := partRows(t, dir)
	// The state a crash after the rename leaves: the compacted file, the marker, the parts.
	name := partName(compactWriter, t0.Add(2*time.Second), 0)
	if err := writePart(dir, name, rows, map[string]string{MetaTable: TableEvaluations}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, markerName(name)), []byte(strings.Join(inputs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	replaced, err := PartsReplaced(dir)
	if err != nil || len(replaced) != 3 || replaced[name] {
		t.Fatalf("replaced %v %v", replaced, err)
	}
	// A marker whose file never arrived hides nothing.
	ghost := partName(compactWriter, t0.Add(time.Hour), 0)
	if err := os.WriteFile(filepath.Join(dir, markerName(ghost)), []byte(inputs[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if replaced, _ := PartsReplaced(dir); len(replaced) != 3 {
		t.Fatalf("a marker without its file hid parts: %v", replaced)
	}
	if _, err := Compact(root, CompactOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	after, names := partRows(t, dir)
	if !reflect.DeepEqual(after, rows) || len(names) != 1 || names[0] != name {
		t.Errorf("after finishing: %d rows (want %d) in %v", len(after), len(rows), names)
	}
	if hidden, _ := filepath.Glob(filepath.Join(dir, ".*")); len(hidden) > 0 {
		t.Errorf("left %v", hidden)
	}
}

// A part of another schema (an older version) is left as it is.
func TestCompactKeepsPartsOfAnotherSchema(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	dir := partDir(root, TableEvaluations, "2026-11-29")
	old := partName("old", t0.Add(-time.Hour), 0)
	if err := writePart(dir, old, []Rejected{{EventID: "x", TS: testTime}}, nil); err != nil {
		t.Fatal(err)
	}
	rows := writeParts(t, root, "2026-11-29", 2, 2, t0)
	got, err := Compact(root, CompactOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].FilesBefore != 3 || got[0].FilesAfter != 2 || !reflect.DeepEqual(got[0].SkippedFiles, []string{old}) {
		t.Fatalf("%+v", got[0])
	}
	var merged []Evaluation
	for _, f := range listFiles(t, root) {
		if strings.Contains(f, "part-compact-") {
			merged, _ = ReadRows[Evaluation](filepath.Join(root, f))
		}
	}
	if !reflect.DeepEqual(merged, rows) {
		t.Errorf("merged %d rows, want %d", len(merged), len(rows))
	}
}
