package export

import (
	"os"
	"path/filepath"
	"testing"
)

// checkGolden compares got with testdata/file (-update rewrites it).
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./export -run Golden -update)", err)
	}
	if got != string(want) {
		t.Fatalf("schema changed; if deliberate, bump SchemaVersion as needed and run with -update.\n got:\n%s\nwant:\n%s", got, want)
	}
}
