package export

import (
	"path/filepath"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// valid is the API's valid, logged as the publisher gave it, else judged
// by the row's reward function; retry is the verdict's.
func TestValidAndRetryColumns(t *testing.T) {
	f := false
	correct := eval.Verdict{Status: eval.StatusCorrect, Compiled: true, Correct: true}
	deadline := eval.Verdict{Status: eval.StatusHarnessError, Retry: "deadline"}
	broken := eval.Verdict{Status: eval.StatusHarnessError, TaskError: "forward is broken"}
	hack := eval.Verdict{Status: eval.StatusRewardHack, HackFlags: []string{"forge"}, TaskError: "x"}
	tests := []struct {
		name      string
		ev        event.Evaluation
		valid     bool
		retry     string
		nullRetry bool
	}{
		{"said valid", event.Evaluation{RewardFn: "binary", Valid: ptr(true), Verdict: correct}, true, "", true},
		{"said invalid wins over the verdict", event.Evaluation{RewardFn: "binary", Valid: &f, Verdict: correct}, false, "", true},
		{"a deadline stop, not said: judged", event.Evaluation{RewardFn: "binary", Verdict: deadline}, false, "deadline", false},
		{"a broken reference, default function", event.Evaluation{Verdict: broken}, false, "", true},
		{"a hack is the candidate's doing", event.Evaluation{RewardFn: "kevin", Verdict: hack}, true, "", true},
		{"an unknown function says nothing", event.Evaluation{RewardFn: "nope", Verdict: correct}, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ev.EventID, tt.ev.EvalID, tt.ev.Time = "e", "e", testTime
			r := EvaluationRow(tt.ev)
			if r.Valid == nil || *r.Valid != tt.valid || r.IsValid() != tt.valid || r.Retry != tt.retry {
				t.Fatalf("valid %v (IsValid %v) retry %q, want %v %q", r.Valid, r.IsValid(), r.Retry, tt.valid, tt.retry)
			}
			dir := t.TempDir()
			if err := writePart(dir, "p.parquet", []Evaluation{r}, nil); err != nil {
				t.Fatal(err)
			}
			got := leafValues(t, filepath.Join(dir, "p.parquet"))
			if got["valid"].IsNull() || got["valid"].Boolean() != tt.valid || got["retry"].IsNull() != tt.nullRetry {
				t.Errorf("written valid %v retry %v", got["valid"], got["retry"])
			}
		})
	}
}

// A 1.4 row has no valid column: IsValid judges its verdict columns by its
// reward function, so a deadline stop logged before the column is still
// left out of exports.
func TestIsValidOfA14Row(t *testing.T) {
	rows, err := ReadRows[Evaluation](filepath.Join("testdata", "evaluations-1.4.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"old-correct": true, "old-deadline": false, "old-wrong": true}
	for _, r := range rows {
		if r.Valid != nil || r.IsValid() != want[r.EvalID] {
			t.Errorf("%s: valid %v IsValid %v, want null and %v", r.EvalID, r.Valid, r.IsValid(), want[r.EvalID])
		}
	}
}
