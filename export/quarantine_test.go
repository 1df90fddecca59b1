package export

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// corrupt overwrites the middle of a file, as a bad block would.
func corrupt(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 3; i < len(data)-4 && i < len(data)/3+64; i++ {
		data[i] = 0xff
	}
	// The footer's length too: the file no longer opens.
	copy(data[len(data)-8:], []byte{0xff, 0xff, 0xff, 0x7f})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A part that is not valid Parquet is quarantined by the sink's dedup seed,
// keeping its partition path under .quarantine, and the sink writes on.
func TestSinkQuarantinesACorruptPart(t *testing.T) {
	root := t.TempDir()
	ev := func(id string, n uint64) bus.Event {
		e := busEvent(t, event.SubjectEvaluation, id, evalEvent(id, testTime))
		e.NumDelivered = n
		return e
	}
	if err := newTestSink(t, root).Handle(t.Context(), []bus.Event{ev("a", 1)}); err != nil {
		t.Fatal(err)
	}
	files := listFiles(t, root)
	if len(files) != 1 {
		t.Fatalf("files %v, want one part", files)
	}
	corrupt(t, filepath.Join(root, files[0]))
	if _, err := VerifyFile(filepath.Join(root, files[0])); !IsCorrupt(err) {
		t.Fatalf("VerifyFile of a corrupt part = %v, want a CorruptError", err)
	}
	// A restarted sink seeds its dedup set from the files: it meets the bad one.
	if err := newTestSink(t, root).Handle(t.Context(), []bus.Event{ev("a", 2), ev("b", 1)}); err != nil {
		t.Fatalf("Handle with a corrupt part on disk: %v", err)
	}
	if !slices.Contains(listFiles(t, root), QuarantineDir+"/"+files[0]) {
		t.Fatalf("files %v: the corrupt part is not under %s", listFiles(t, root), QuarantineDir)
	}
	if n := QuarantinedFiles(root); n != 1 {
		t.Fatalf("QuarantinedFiles = %d, want 1", n)
	}
	got := eventIDs(readTable[Evaluation](t, root, TableEvaluations))
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("rows after the quarantine %v, want [a b] (a written again from its redelivery)", got)
	}
}

// Compaction moves a corrupt part aside and compacts the rest.
func TestCompactQuarantinesACorruptPart(t *testing.T) {
	root := t.TempDir()
	want := writeParts(t, root, "2026-11-28", 3, 2, time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC))
	dir := partDir(root, TableEvaluations, "2026-11-28")
	_, names := partRows(t, dir)
	corrupt(t, filepath.Join(dir, names[0]))
	done, err := Compact(root, CompactOptions{}, nil)
	if err != nil {
		t.Fatalf("Compact with a corrupt part: %v", err)
	}
	if len(done) != 1 || len(done[0].Quarantined) != 1 || !strings.HasSuffix(done[0].Quarantined[0], names[0]) {
		t.Fatalf("compaction %+v, want the corrupt part quarantined", done)
	}
	rows, left := partRows(t, dir)
	if len(left) != 1 || len(rows) != len(want)-2 {
		t.Fatalf("after compaction: files %v with %d rows, want one file with %d", left, len(rows), len(want)-2)
	}
}

func TestQuarantineRefusesAPathOutsideRoot(t *testing.T) {
	if _, err := Quarantine(t.TempDir(), "/etc/passwd", nil, kgtest.Logger(t)); err == nil {
		t.Fatal("quarantined a file outside the root")
	}
}
