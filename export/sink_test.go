package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

var partPattern = regexp.MustCompile(`^table=(evaluations|episode_steps|rejected)/date=\d{4}-\d{2}-\d{2}/part-w1-\d+-\d+\.parquet$`)

// wantOnlyParts fails if any file under root is not a renamed part file.
func wantOnlyParts(t *testing.T, root string) []string {
	t.Helper()
	files := listFiles(t, root)
	for _, f := range files {
		if !partPattern.MatchString(f) {
			t.Errorf("unexpected file %s (temp file left behind?)", f)
		}
	}
	return files
}

// partitions returns the table=/date= directories of files.
func partitions(files []string) []string {
	var ps []string
	for _, f := range files {
		ps = append(ps, filepath.ToSlash(filepath.Dir(f)))
	}
	return slices.Compact(ps)
}

func TestHandleMixedBatch(t *testing.T) {
	root := t.TempDir()
	s := newTestSink(t, root)
	nextDay := testTime.Add(2 * time.Second) // crosses midnight UTC
	evs := []bus.Event{
		busEvent(t, event.SubjectEvaluation, "e1", evalEvent("e1", testTime)),
		busEvent(t, event.SubjectEpisodeStep, "s1", stepEvent("s1", testTime)),
		busEvent(t, event.SubjectEvaluation, "e2", evalEvent("e2", nextDay)),
		busEvent(t, "events.future_table", "x1", map[string]int{"n": 1}), // unknown: skipped
		busEvent(t, event.SubjectEvaluation, "e3", evalEvent("e3", testTime)),
	}
	if err := s.Handle(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	files := wantOnlyParts(t, root)
	want := []string{"table=episode_steps/date=2026-11-29", "table=evaluations/date=2026-11-29", "table=evaluations/date=2026-11-30"}
	if got := partitions(files); !reflect.DeepEqual(got, want) || len(files) != 3 {
		t.Fatalf("files %v; partitions %v, want %v, one file each", files, got, want)
	}
	evals := readTable[Evaluation](t, root, TableEvaluations)
	wantEvals := []Evaluation{EvaluationRow(evalEvent("e1", testTime)), EvaluationRow(evalEvent("e3", testTime)), EvaluationRow(evalEvent("e2", nextDay))}
	if !reflect.DeepEqual(evals, wantEvals) {
		t.Fatalf("evaluations:\n got %+v\nwant %+v", evals, wantEvals)
	}
	steps := readTable[EpisodeStep](t, root, TableEpisodeSteps)
	if want := []EpisodeStep{EpisodeStepRow(stepEvent("s1", testTime))}; !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps:\n got %+v\nwant %+v", steps, want)
	}
}

func eventIDs[T any](rows []T) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, reflect.ValueOf(r).FieldByName("EventID").String())
	}
	slices.Sort(ids)
	return ids
}

func TestHandleDedup(t *testing.T) {
	root := t.TempDir()
	s := newTestSink(t, root)
	e := func(id string) bus.Event { return busEvent(t, event.SubjectEvaluation, id, evalEvent(id, testTime)) }
	if err := s.Handle(t.Context(), []bus.Event{e("a"), e("b")}); err != nil {
		t.Fatal(err)
	}
	// A redelivery of a (already written), a duplicate within the batch (c
	// twice) and a body whose event_id differs but whose message id is b.
	redelivered := e("a")
	redelivered.NumDelivered = 2
	renamed := busEvent(t, event.SubjectEvaluation, "b", evalEvent("other", testTime))
	if err := s.Handle(t.Context(), []bus.Event{redelivered, e("c"), e("c"), renamed}); err != nil {
		t.Fatal(err)
	}
	// A batch that is all duplicates writes nothing.
	before := len(listFiles(t, root))
	if err := s.Handle(t.Context(), []bus.Event{e("a"), e("c")}); err != nil {
		t.Fatal(err)
	}
	if after := len(listFiles(t, root)); after != before {
		t.Fatalf("all-duplicate batch wrote %d files", after-before)
	}
	got := eventIDs(readTable[Evaluation](t, root, TableEvaluations))
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("event ids %v, want %v", got, want)
	}
}

// A crash after the rename and before the ack: the new process's sink must
// not write the redelivered events again.
func TestHandleDedupAfterRestart(t *testing.T) {
	root := t.TempDir()
	e := func(id string, n uint64) bus.Event {
		ev := busEvent(t, event.SubjectEvaluation, id, evalEvent(id, testTime))
		ev.NumDelivered = n
		return ev
	}
	rej := bus.Event{ID: "bad", Subject: event.SubjectEvaluation, Data: []byte("{"), NumDelivered: 1}
	if err := newTestSink(t, root).Handle(t.Context(), []bus.Event{e("a", 1), e("b", 1), rej}); err != nil {
		t.Fatal(err)
	}
	// A stale temp file of this writer (crash before rename) is cleaned up;
	// another writer's is left alone.
	dir := partDir(root, TableEvaluations, "2026-11-29")
	for _, name := range []string{".part-w1-1-1.parquet.tmp", ".part-w2-1-1.parquet.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Restarted days later: the window counts back from the newest file.
	later := time.Now().Add(72 * time.Hour)
	s2 := newTestSink(t, root, WithClock(func() time.Time { return later }))
	rej.NumDelivered = 2
	if err := s2.Handle(t.Context(), []bus.Event{e("a", 2), e("b", 2), rej, e("c", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(readTable[Evaluation](t, root, TableEvaluations)); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("event ids after restart %v, want [a b c]", got)
	}
	if got := readTable[Rejected](t, root, TableRejected); len(got) != 1 {
		t.Fatalf("%d rejected rows after restart, want 1", len(got))
	}
	files := listFiles(t, root)
	if slices.Contains(files, "table=evaluations/date=2026-11-29/.part-w1-1-1.parquet.tmp") ||
		!slices.Contains(files, "table=evaluations/date=2026-11-29/.part-w2-1-1.parquet.tmp") {
		t.Fatalf("temp files after restart: %v", files)
	}
}

func TestHandleRejects(t *testing.T) {
	tests := []struct {
		name, subject string
		data          string
		wantErr       string
	}{
		{"malformed json", event.SubjectEvaluation, `{"eval_id":`, "decode"},
		{"wrong type", event.SubjectEpisodeStep, `{"episode_id":"e","turn":"two"}`, "decode"},
		{"not utf-8", event.SubjectEvaluation, "\xff\xfe", "decode"},
		{"null body", event.SubjectEvaluation, `null`, "missing eval_id"},
		{"no episode id", event.SubjectEpisodeStep, `{"turn":1}`, "missing episode_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			s := newTestSink(t, root, WithClock(func() time.Time { return testTime }))
			good := busEvent(t, event.SubjectEvaluation, "good", evalEvent("good", testTime))
			bad := bus.Event{ID: "bad", Subject: tt.subject, Data: []byte(tt.data), NumDelivered: 3}
			if err := s.Handle(t.Context(), []bus.Event{bad, good}); err != nil {
				t.Fatalf("Handle = %v; a bad event must not fail the batch", err)
			}
			wantOnlyParts(t, root)
			rej := readTable[Rejected](t, root, TableRejected)
			if len(rej) != 1 {
				t.Fatalf("rejected rows %+v, want 1", rej)
			}
			r := rej[0]
			if r.EventID != "bad" || r.Subject != tt.subject || string(r.Data) != tt.data ||
				!strings.Contains(r.Error, tt.wantErr) || r.NumDelivered != 3 || !r.TS.Equal(rowTime(testTime)) {
				t.Fatalf("rejected row %+v, want error containing %q", r, tt.wantErr)
			}
			if got := readTable[Evaluation](t, root, TableEvaluations); len(got) != 1 {
				t.Fatalf("good event: %d rows, want 1", len(got))
			}
		})
	}
}

// A failing write returns an error and leaves no part and no temp file.
func TestHandleWriteError(t *testing.T) {
	root := t.TempDir()
	// table=evaluations is a file, so its partition directory cannot be made.
	if err := os.WriteFile(filepath.Join(root, "table=evaluations"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newTestSink(t, root)
	err := s.Handle(t.Context(), []bus.Event{busEvent(t, event.SubjectEvaluation, "e1", evalEvent("e1", testTime))})
	if err == nil || !strings.Contains(err.Error(), "export.") {
		t.Fatalf("Handle = %v, want a wrapped error", err)
	}
	if files := listFiles(t, root); !reflect.DeepEqual(files, []string{"table=evaluations"}) {
		t.Fatalf("files after a failed write: %v", files)
	}
	if s.seen.has("e1") {
		t.Fatal("an unwritten event was marked as written")
	}
}

func TestNewSinkValidates(t *testing.T) {
	tests := []struct {
		root, writer string
		ok           bool
	}{
		{"r", "gw-host1.sink_0", true},
		{"", "w", false},
		{"r", "", false},
		{"r", "a/b", false},
		{"r", ".hidden", false},
		{"r", strings.Repeat("x", 65), false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.root, tt.writer), func(t *testing.T) {
			_, err := NewSink(tt.root, tt.writer, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("NewSink = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestPartName(t *testing.T) {
	at := time.Unix(0, 1798588798123456789)
	name := partName("gw-1", at, 7)
	if name != "part-gw-1-1798588798123456789-7.parquet" {
		t.Fatalf("partName = %s", name)
	}
	if got, ok := partTime(name); !ok || !got.Equal(at) {
		t.Fatalf("partTime(%s) = %v, %v", name, got, ok)
	}
	for _, bad := range []string{"part-x.parquet", tempName(name), "part-w-notanumber-1.parquet", "data.parquet"} {
		if _, ok := partTime(bad); ok {
			t.Errorf("partTime(%q) ok", bad)
		}
	}
}

// Flush returns once everything logged is written, and says how much was
// left when the sink stops or time runs out first.
func TestSinkFlush(t *testing.T) {
	b := startBus(t)
	for i := range 5 {
		if err := event.Publish(t.Context(), b, event.Evaluation{EventID: fmt.Sprint("flush-", i), Time: time.Now().UTC(),
			EvalID: fmt.Sprint("flush-", i), Verdict: eval.Verdict{Status: eval.StatusCorrect}}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewSink(t.TempDir(), "test", kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if left, err := s.Flush(short, b); left != 5 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("nothing running: %d left, %v", left, err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, b) }()
	if left, err := s.Flush(t.Context(), b); left != 0 || err != nil {
		t.Fatalf("running: %d left, %v", left, err)
	}
	if err := event.Publish(t.Context(), b, event.Evaluation{EventID: "late", EvalID: "late", Time: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	stop()
	<-done
	if left, err := s.Flush(t.Context(), b); left != 1 || err == nil {
		t.Fatalf("stopped: %d left, %v", left, err)
	}
}
