package dataset

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// A batch's code comes back from the log by index: its own rows only, from
// two parts and across midnight, an item not logged yet absent; a day
// before the batch is not read, a broken part is moved aside.
func TestBatchCode(t *testing.T) {
	data := t.TempDir()
	// Part 1 (10:00 on the 29th): items 1 and 0 of b_x, one of b_xy (a prefix
	// of none of b_x's ids), one of another batch.
	writeLog(t, data,
		ev{id: "b_x-00001", task: "ci/a", code: "one", status: "correct", batch: "b_x", completion: "```python\none\n```"},
		ev{id: "b_xy-00000", task: "ci/a", code: "other batch", status: "correct", batch: "b_xy"},
		ev{id: "b_x-00000", task: "ci/a", code: "zero", status: "correct", batch: "b_x"},
		ev{id: "e_y-00000", task: "ci/a", code: "not ours", status: "correct", batch: "e_y"})
	// Part 2, after midnight: item 3 (item 2 is not logged yet).
	writeLog(t, data, ev{id: "b_x-00003", task: "ci/a", code: "three", status: "correct", batch: "b_x", min: 15 * 60})
	got, err := BatchCode(kgtest.Logger(t), data, "b_x", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		i    int
		code string
	}{{0, "zero"}, {1, "one"}, {3, "three"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want indexes 0, 1, 3", got)
	}
	for k, w := range want {
		if got[k].Index != w.i || got[k].Code != w.code || got[k].EvalID == "" {
			t.Errorf("item %d: %+v, want index %d code %q", k, got[k], w.i, w.code)
		}
	}
	if got[1].Completion == nil || *got[1].Completion != "```python\none\n```" || got[0].Completion != nil {
		t.Errorf("completions: %v, %v", got[0].Completion, got[1].Completion)
	}
	// The batch's day only onward: a batch created the next day finds none of these.
	if later, err := BatchCode(kgtest.Logger(t), data, "b_x", t0.Add(48*time.Hour)); err != nil || len(later) != 0 {
		t.Errorf("from two days later: %+v, %v", later, err)
	}
	// A part that is not Parquet is moved aside; the others still answer.
	parts, _ := filepath.Glob(filepath.Join(data, LogDir, "table=evaluations", "date=2026-11-29", "*.parquet"))
	if len(parts) != 1 {
		t.Fatalf("parts of the 29th: %v", parts)
	}
	if err := os.WriteFile(parts[0], []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = BatchCode(kgtest.Logger(t), data, "b_x", t0)
	if err != nil || len(got) != 1 || got[0].Index != 3 {
		t.Fatalf("with the first part broken: %+v, %v", got, err)
	}
	if _, err := os.Stat(parts[0]); !os.IsNotExist(err) {
		t.Errorf("the broken part was not moved aside: %v", err)
	}
	if _, err := BatchCode(kgtest.Logger(t), t.TempDir(), "b_x", t0); err == nil {
		t.Error("no log at all: want an error")
	}
}
