package redteam

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTargetsPairsBySameFileName(t *testing.T) {
	root := t.TempDir()
	tasks, sols := filepath.Join(root, "mini"), filepath.Join(root, "sol")
	for path, src := range map[string]string{
		filepath.Join(tasks, "1_a.py"): testReference,
		filepath.Join(tasks, "2_b.py"): testReference,
		filepath.Join(sols, "1_a.py"):  testSolution,
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var w bytes.Buffer
	got, err := Targets(tasks, sols, &w)
	if err != nil || len(got) != 1 || got[0].ID != "mini/1_a" || got[0].Solution != testSolution {
		t.Fatalf("Targets: %+v, %v", got, err)
	}
	if !strings.Contains(w.String(), "2_b has no solution") {
		t.Errorf("a task left out must be named: %q", w.String())
	}
	if _, err := Targets(tasks, filepath.Join(root, "none"), &w); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a missing solutions dir: %v", err)
	}
	if _, err := Targets(tasks, tasks, &w); err != nil {
		t.Errorf("tasks as their own solutions still pair (the generator refuses them later): %v", err)
	}
	empty := t.TempDir()
	if _, err := Targets(tasks, empty, &w); err == nil || !strings.Contains(err.Error(), "no task in") {
		t.Errorf("no pair at all: %v", err)
	}
}

func TestFailureNamesWhatFailed(t *testing.T) {
	if (Report{OK: true}).Failure() != nil {
		t.Fatal("an OK report has no failure")
	}
	r := Report{Missed: 3, ControlsFailed: 1, Errors: 2, GapsClosed: []string{"g"},
		Classes: []ClassReport{{Name: "a", Missed: 2}, {Name: "b"}, {Name: "c", Missed: 1}}}
	want := "redteam: 3 variants missed: a (2), c (1); 1 controls not correct; 2 evaluations could not run; known gaps closed (remove their gap: line): g"
	if err := r.Failure(); err == nil || err.Error() != want {
		t.Fatalf("Failure: %v\nwant %s", err, want)
	}
}

func TestLeftoversFindsOnlyTheRunsTokens(t *testing.T) {
	dir := t.TempDir()
	cls := Classes()[0]
	cases := []Case{{Target: "a"}, {Target: "a", Class: &cls, Token: "N-1-"}, {Target: "a", Class: &cls, Token: "N-12-"}}
	for _, name := range []string{"stash-N-12-", "other", "stash-N-1"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	got := Leftovers(cases, dir, filepath.Join(dir, "missing"))
	if len(got) != 1 || len(got[2]) != 1 || got[2][0] != filepath.Join(dir, "stash-N-12-") {
		t.Fatalf("leftovers %v", got)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 2 {
		t.Errorf("only the found leftover is removed; %d entries remain", len(left))
	}
}
