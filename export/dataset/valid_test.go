package dataset

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
)

// invalidLog holds two honest rows and the samples the API answered
// valid=false: a deadline stop, a broken inline reference, and a correct
// verdict the API masked all the same (the valid column decides, not the
// status).
func invalidLog(t *testing.T) string {
	dir := t.TempDir()
	no := false
	writeLog(t, dir,
		ev{id: "good", task: "ci/a", code: "fast", status: ok, speedup: 2, min: 1},
		ev{id: "wrong", task: "ci/a", code: "wrong", status: bad, min: 2},
		ev{id: "deadline", task: "ci/a", code: "slow", status: herr, min: 3, valid: &no, retry: "deadline"},
		ev{id: "broken", task: "ci/a", code: "any", status: herr, min: 4, taskError: "forward is broken", inline: true},
		ev{id: "masked", task: "ci/a", code: "masked", status: ok, speedup: 9, min: 5, valid: &no},
	)
	return dir
}

var invalidIDs = []string{"broken", "deadline", "masked"}

// exportedIDs lists the eval ids an export's file names, in any of its id columns.
func exportedIDs(t *testing.T, format Format, out string) []string {
	t.Helper()
	var ids []string
	switch format {
	case FormatSFT:
		for _, r := range read[sftRow](t, filepath.Join(out, "sft.parquet")) {
			ids = append(ids, r.EvalID)
		}
	case FormatDPO:
		for _, r := range read[dpoRow](t, filepath.Join(out, "dpo.parquet")) {
			ids = append(ids, r.ChosenEvalID, r.RejectedEvalID)
		}
	case FormatTrajectories:
		for _, r := range read[trajRow](t, filepath.Join(out, "trajectories.parquet")) {
			if r.EvalID != nil { // a failed search step evaluated nothing
				ids = append(ids, *r.EvalID)
			}
		}
	case FormatArrow:
		ids = arrowColumn(t, filepath.Join(out, "evaluations.arrow"), "eval_id")
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func TestInvalidRowsAreLeftOutOfEveryExport(t *testing.T) {
	dir := invalidLog(t)
	for _, f := range []Format{FormatSFT, FormatDPO, FormatTrajectories, FormatArrow} {
		t.Run(string(f), func(t *testing.T) {
			out, m := runExport(t, dir, Request{Format: string(f)})
			if m.Skipped[SkipInvalid] != int64(len(invalidIDs)) {
				t.Errorf("skipped %v, want invalid: %d", m.Skipped, len(invalidIDs))
			}
			ids := exportedIDs(t, f, out)
			for _, id := range invalidIDs {
				if slices.Contains(ids, id) {
					t.Errorf("%s exported invalid row %s (%v)", f, id, ids)
				}
			}
			if !slices.Contains(ids, "good") {
				t.Errorf("%s left out the valid row: %v", f, ids)
			}
			out, m = runExport(t, dir, Request{Format: string(f), IncludeInvalid: true})
			if _, counted := m.Skipped[SkipInvalid]; counted || !m.Filters.IncludeInvalid {
				t.Errorf("--include-invalid: skipped %v, filters %+v", m.Skipped, m.Filters)
			}
			ids = exportedIDs(t, f, out)
			want := map[Format][]string{ // sft: the masked correct row is the fastest; dpo: it is chosen
				FormatSFT: {"masked"}, FormatDPO: {"masked"}, FormatTrajectories: invalidIDs, FormatArrow: invalidIDs,
			}[f]
			for _, id := range want {
				if !slices.Contains(ids, id) {
					t.Errorf("--include-invalid: %s lacks %s (%v)", f, id, ids)
				}
			}
		})
	}
	for _, f := range []string{"verl", "skills", "search-trees"} {
		if _, err := (Request{Format: f, IncludeInvalid: true}).Parse(); err == nil {
			t.Errorf("include_invalid accepted by %s, which reads no evaluations", f)
		}
	}
}

// The deadline stop and the broken reference keep what the API said in
// the log's own columns.
func TestInvalidRowsInTheLog(t *testing.T) {
	dir := invalidLog(t)
	rows := read[export.Evaluation](t, mustGlob(t, filepath.Join(dir, LogDir, "table=evaluations", "*", "*.parquet")))
	by := map[string]export.Evaluation{}
	for _, r := range rows {
		by[r.EvalID] = r
	}
	if r := by["deadline"]; r.Valid == nil || *r.Valid || r.Retry != "deadline" || r.Status != string(eval.StatusHarnessError) {
		t.Errorf("deadline row valid %v retry %q", r.Valid, r.Retry)
	}
	if r := by["broken"]; r.Valid == nil || *r.Valid || r.TaskID != "" || r.TaskError == "" {
		t.Errorf("broken row %+v", r)
	}
	if r := by["good"]; r.Valid == nil || !*r.Valid {
		t.Errorf("good row valid %v", r.Valid)
	}
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("glob %s: %v %v", pattern, m, err)
	}
	return m[0]
}
