package harness

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestExtractPyConcurrent(t *testing.T) {
	dir := t.TempDir()
	roots := make([]string, 8)
	var wg sync.WaitGroup
	for i := range roots {
		wg.Go(func() {
			r, err := ExtractPy(dir)
			if err != nil {
				t.Error(err)
			}
			roots[i] = r
		})
	}
	wg.Wait()
	for _, r := range roots {
		if r != roots[0] {
			t.Fatalf("different roots %q and %q", r, roots[0])
		}
	}
	if _, err := os.Stat(filepath.Join(roots[0], "kgharness", "__init__.py")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp dirs left behind: %v", entries)
	}
}

func TestResolvePythonExplicit(t *testing.T) {
	if _, err := ResolvePython(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("missing interpreter: %v, want a hint about make setup", err)
	}
	exe, _ := os.Executable()
	if got, err := ResolvePython(exe); err != nil || got != exe {
		t.Errorf("ResolvePython(%q) = %q, %v", exe, got, err)
	}
}

func TestLineLogTruncatesAndKeepsTail(t *testing.T) {
	var sb strings.Builder
	l := newLineLog(slog.New(slog.NewTextHandler(&sb, nil)), 10)
	l.Write([]byte("first line that is long\nsec"))
	l.Write([]byte("ond\nthird"))
	if !strings.Contains(sb.String(), "first line") || strings.Contains(sb.String(), "that is long") {
		t.Errorf("not truncated: %s", sb.String())
	}
	if got := l.Tail(2); got != "second\nthird" {
		t.Errorf("Tail(2) = %q", got)
	}
}
