package tasks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
)

// The project's own suites get the figures of datasets/manifest.json.
func TestWithFiguresFromTheRepoManifest(t *testing.T) {
	dirs := []string{"../datasets/ci"}
	ts, err := LoadSuites(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if err := WithFigures(ts, dirs); err != nil {
		t.Fatal(err)
	}
	m, err := datasets.ReadManifest("../datasets/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := m.Find("ci/1_add_relu")
	if !ok || want.GPU == nil {
		t.Fatal("the manifest has no GPU figures for ci/1_add_relu")
	}
	for _, tk := range ts {
		if tk.ID == "ci/1_add_relu" && !reflect.DeepEqual(tk.GPU, want.GPU) {
			t.Errorf("ci/1_add_relu: figures %+v, manifest %+v", tk.GPU, want.GPU)
		}
	}
}

// Matched by id within the suite's own directory; an API task never gets
// figures; an unreadable manifest is an error that leaves the other suites'.
func TestWithFigures(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"good/s/one.py", "good/other/one.py", "bad/b/two.py"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
	}
	speed := 2.5
	m := datasets.Manifest{Tasks: []datasets.Entry{
		{ID: "s/one", GPU: &datasets.GPURun{Name: "NVIDIA H200", RefMS: 0.5, SolutionSpeedup: &speed, MeasuredAt: "2026-11-30"}},
		{ID: "s/none"},
	}}
	if err := m.Write(filepath.Join(root, "good", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "bad", "manifest.json"), []byte("{"), 0o644)
	now := time.Now()
	ts := []Task{
		New("s/one", "x", OriginSuite, now),
		New("other/one", "x", OriginSuite, now), // same stem, another suite: not s/one's figures
		New("s/none", "x", OriginSuite, now),
		New("b/two", "x", OriginSuite, now),
		New("s/one", "x", OriginAPI, now),
	}
	err := WithFigures(ts, []string{filepath.Join(root, "good", "s"), filepath.Join(root, "good", "other"), filepath.Join(root, "bad", "b")})
	if err == nil || !strings.Contains(err.Error(), filepath.Join("bad", "manifest.json")) {
		t.Errorf("err %v, want the bad manifest named", err)
	}
	if g := ts[0].GPU; g == nil || g.RefMS != 0.5 || *g.SolutionSpeedup != 2.5 {
		t.Errorf("s/one: %+v", g)
	}
	for _, i := range []int{1, 2, 3, 4} {
		if ts[i].GPU != nil {
			t.Errorf("%s (%s) got figures %+v", ts[i].ID, ts[i].Origin, ts[i].GPU)
		}
	}
}
