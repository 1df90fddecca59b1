package datasets

import (
	"os"
	"slices"
	"testing"
)

// awaitingGPU are the suites whose tasks no GPU check has measured yet (they
// are too large for a CPU): their entries come from a CPU check at shape
// level. Take a suite out once `kernelgate tasks check datasets/<suite>
// --manifest datasets/manifest.json` has run on a GPU.
var awaitingGPU = map[string]bool{}

// The project's manifest describes exactly the project's tasks: a task
// added, renamed or re-tagged without re-running `kernelgate tasks check
// datasets/ --manifest datasets/manifest.json` fails here.
func TestProjectManifestMatchesTheSuites(t *testing.T) {
	suites, err := Suites(".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest("manifest.json")
	if err != nil || len(m.Tasks) == 0 {
		t.Fatalf("datasets/manifest.json: %d tasks, %v", len(m.Tasks), err)
	}
	seen := map[string]bool{}
	for _, s := range suites {
		for _, task := range s.Tasks {
			id := s.Name + "/" + task.Name
			seen[id] = true
			e, ok := m.Find(id)
			if !ok {
				t.Errorf("%s: not in manifest.json", id)
				continue
			}
			name, tags := Declared(task.Source)
			if e.Name != name || !slices.Equal(e.Tags, tags) || e.Level != s.Level {
				t.Errorf("%s: manifest says %q %q level %d; the file declares %q %q (level %d)", id, e.Name, e.Tags, e.Level, name, tags, s.Level)
			}
			want := ""
			if s.Solution(task) != "" {
				want = "solutions/" + s.Name + "/" + task.Name + ".py"
			}
			if e.Solution != want {
				t.Errorf("%s: manifest solution %q, on disk %q", id, e.Solution, want)
			}
			if awaitingGPU[s.Name] && e.GPU == nil {
				if e.Checked != "shapes" || e.DType == "" || e.MB == nil {
					t.Errorf("%s: no CPU shape-level check recorded (checked %q)", id, e.Checked)
				}
				continue
			}
			if e.Checked != "full" || e.GPU == nil || e.GPU.RefMS <= 0 || e.DType == "" {
				t.Errorf("%s: no full GPU check recorded (checked %q, gpu %+v)", id, e.Checked, e.GPU)
			}
		}
	}
	for _, e := range m.Tasks {
		if !seen[e.ID] {
			t.Errorf("%s: in manifest.json but no such task file", e.ID)
		}
		if e.Solution != "" {
			if _, err := os.Stat(e.Solution); err != nil {
				t.Errorf("%s: %v", e.ID, err)
			}
		}
	}
}
