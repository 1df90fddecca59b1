package datasets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestManifestMergeKeepsGPUFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	m, err := ReadManifest(path)
	if err != nil || len(m.Tasks) != 0 {
		t.Fatalf("missing manifest: %+v %v", m, err)
	}
	sp := 1.5
	m.Merge([]Entry{{ID: "level1/10_b", Checked: "full", GPU: &GPURun{Name: "NVIDIA H200", RefMS: 2, SolutionSpeedup: &sp}},
		{ID: "level1/2_a", Checked: "full"}, {ID: "ci/1_x"}})
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	m, err = ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	// A CPU check of the same task replaces the entry but keeps the GPU run, and how
	// deep the GPU checked: the repo test takes "shapes" for a task no GPU has run.
	m.Merge([]Entry{{ID: "level1/10_b", Checked: "shapes"}})
	m.Remove([]string{"ci/1_x"})
	var ids []string
	for _, e := range m.Tasks {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, " ") != "level1/2_a level1/10_b" {
		t.Errorf("ids %q, want natural order without the removed one", ids)
	}
	e, _ := m.Find("level1/10_b")
	if e.Checked != "full" || e.GPU == nil || e.GPU.RefMS != 2 || *e.GPU.SolutionSpeedup != 1.5 {
		t.Errorf("merged entry %+v %+v", e, e.GPU)
	}
}

func TestManifestRejectsOtherSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	os.WriteFile(path, []byte(`{"schema_version": 7, "tasks": []}`), 0o644)
	if _, err := ReadManifest(path); err == nil || !strings.Contains(err.Error(), "schema_version 7") {
		t.Errorf("err %v", err)
	}
	os.WriteFile(path, []byte(`{"schema_version": `), 0o644)
	if _, err := ReadManifest(path); err == nil {
		t.Error("truncated manifest read without error")
	}
}

func TestSuites(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"level3/1_mlp.py", "level3/2_attn.py", "ci/1_a.py", "solutions/ci/1_a.py", "empty/README.md"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644)
	}
	suites, err := Suites(root)
	if err != nil || len(suites) != 2 || suites[0].Name != "ci" || suites[1].Name != "level3" || suites[1].Level != 3 {
		t.Fatalf("suites %+v %v", suites, err)
	}
	if p := suites[0].Solution(suites[0].Tasks[0]); p != filepath.Join(root, "solutions/ci/1_a.py") {
		t.Errorf("solution %q", p)
	}
	if p := suites[1].Solution(suites[1].Tasks[0]); p != "" {
		t.Errorf("level3 solution %q, want none", p)
	}
	one, err := Suites(filepath.Join(root, "level3"))
	if err != nil || len(one) != 1 || len(one[0].Tasks) != 2 {
		t.Errorf("one suite %+v %v", one, err)
	}
	if _, err := Suites(filepath.Join(root, "empty")); err == nil || !strings.Contains(err.Error(), "no task files") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Suites(filepath.Join(root, "missing")); err == nil {
		t.Error("missing dir: no error")
	}
}
