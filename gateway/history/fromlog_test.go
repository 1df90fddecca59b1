package history

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
)

// logEvals writes n evaluations through the Parquet sink under root, the
// i-th at at(i), in batches as the sink gets them; statuses cycle through
// correct, incorrect, compile_error and reward_hack.
func logEvals(tb testing.TB, root string, n int, at func(i int) time.Time) {
	tb.Helper()
	sink, err := export.NewSink(root, "history-test", slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	statuses := []eval.Status{eval.StatusCorrect, eval.StatusIncorrect, eval.StatusCompileError, eval.StatusRewardHack}
	var evs []bus.Event
	for i := range n {
		st := statuses[i%len(statuses)]
		v := eval.Verdict{SchemaVersion: eval.SchemaVersion, Status: st, TaskName: fmt.Sprintf("task%d", i%50),
			TaskHash: fmt.Sprintf("sha256:%064d", i%50), CodeHash: "sha256:c", HackFlags: []string{}}
		reward := 0.0
		if st == eval.StatusCorrect {
			v.Correct, v.Speedup, reward = true, f(1+float64(i%7)/10), 1
		}
		if st == eval.StatusRewardHack {
			v.HackFlags = []string{"thread"}
		}
		id := fmt.Sprintf("ev%07d", i)
		e := event.Evaluation{EventID: id, Time: at(i), EvalID: "b_" + id + "-00000", BatchID: "b_" + id,
			TaskID: fmt.Sprintf("ci/task%d", i%50), Code: "def kernel(): pass\n" + id, RewardFn: "binary", Reward: &reward, Verdict: v}
		data, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, bus.Event{ID: id, Subject: event.SubjectEvaluation, Data: data, NumDelivered: 1})
		if len(evs) == export.BatchSize || i == n-1 {
			if err := sink.Handle(context.Background(), evs); err != nil {
				tb.Fatal(err)
			}
			evs = evs[:0]
		}
	}
}

func TestRebuildFromTheLog(t *testing.T) {
	root := t.TempDir()
	now := time.Now().UTC()
	// 400 in the last hour, one a second back; 40 from 2 to 3 hours back.
	logEvals(t, root, 400, func(i int) time.Time { return now.Add(-time.Duration(i+1) * time.Second) })
	old := filepath.Join(root, "old")
	logEvals(t, old, 40, func(i int) time.Time { return now.Add(-2*time.Hour - time.Duration(i)*time.Minute) })
	moveParts(t, old, root)
	// A part written more than a day ago holds nothing of the day: not read,
	// whatever its rows say.
	stale := filepath.Join(root, "stale")
	logEvals(t, stale, 10, func(i int) time.Time { return now.Add(-time.Minute) })
	for _, p := range moveParts(t, stale, root) {
		os.Chtimes(p, now.Add(-25*time.Hour), now.Add(-25*time.Hour))
	}
	// A part that is not Parquet is skipped.
	dir := filepath.Join(root, "table=evaluations", "date="+now.Format(time.DateOnly))
	if err := os.WriteFile(filepath.Join(dir, "part-x-1-1.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}

	h := New(nil)
	// What happened from 100 s back on was seen live: not counted again.
	live := now.Add(-100500 * time.Millisecond)
	got, err := h.Rebuild(root, live, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Done || got.Rows != 300+40 {
		t.Errorf("rebuilt %+v, want 340 rows", got)
	}
	hour, _ := h.View("1h")
	if hour.Evaluations != 300 || hour.Verdicts["correct"] != 75 || hour.Verdicts["reward_hack"] != 75 || !hour.Rebuilt.Done {
		t.Errorf("the hour: %d evaluations, %v", hour.Evaluations, hour.Verdicts)
	}
	day, _ := h.View("24h")
	if day.Evaluations != 340 || len(day.Tasks) != 50 || day.Rewards["binary"].Count != 340 {
		t.Errorf("the day: %d evaluations, %d tasks, rewards %+v", day.Evaluations, len(day.Tasks), day.Rewards["binary"])
	}
	if tk := day.Tasks[0]; tk.TaskID == "" || tk.HackFlags["thread"] == 0 && tk.PassRate == 0 {
		t.Errorf("a task read back: %+v", tk)
	}
	if none, err := New(nil).Rebuild(t.TempDir(), now, slog.New(slog.DiscardHandler)); err != nil || none.Rows != 0 || !none.Done {
		t.Errorf("no log: %+v %v", none, err)
	}
}

// moveParts moves the evaluation parts under from into to's partitions.
func moveParts(t *testing.T, from, to string) []string {
	t.Helper()
	files, err := export.PartFiles(from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range files {
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Rename(p, dst); err != nil {
			t.Fatal(err)
		}
		out = append(out, dst)
	}
	return out
}
