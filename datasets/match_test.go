package datasets

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func tasksNamed(names ...string) []Task {
	var ts []Task
	for _, n := range names {
		ts = append(ts, Task{Name: n, Path: "/tasks/" + n + ".py"})
	}
	return ts
}

func TestMatch(t *testing.T) {
	tasks := tasksNamed("1_add", "11_add", "19_gemm", "19_gemm_relu", "7_softmax", "foo")
	tests := []struct {
		kernel   string
		wantTask string // "" = unmatched
		wantBy   string
	}{
		{"19_gemm_relu.py", "19_gemm_relu", "stem"},
		{"19_gemm_relu_triton.py", "19_gemm_relu", "name"},
		{"level2_19_gemm_relu.py", "19_gemm_relu", "name"},
		{"19_gemm_triton.py", "19_gemm", "name"},
		{"1_add_kernel.py", "1_add", "name"},
		{"11_add_v2.py", "11_add", "name"},
		{"7_fast.py", "7_softmax", "number"},
		{"007_fast.py", "7_softmax", "number"},
		{"level_2_problem_7_sample_0_kernel.py", "7_softmax", "number"},
		{"level1_7_other.py", "7_softmax", "number"},
		{"19_other.py", "", ""}, // two tasks numbered 19
		{"42_missing.py", "", ""},
		{"random.py", "", ""},
		{"foo_triton.py", "foo", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.kernel, func(t *testing.T) {
			m := Match(tasks, []string{"/k/" + tt.kernel})
			if tt.wantTask == "" {
				if len(m.Pairs) != 0 || len(m.UnmatchedKernels) != 1 || m.UnmatchedKernels[0].Reason == "" {
					t.Fatalf("want unmatched with a reason, got %+v", m)
				}
				return
			}
			if len(m.Pairs) != 1 || m.Pairs[0].Task.Name != tt.wantTask || m.Pairs[0].By != tt.wantBy {
				t.Fatalf("got %+v, want %s by %s", m.Pairs, tt.wantTask, tt.wantBy)
			}
			if len(m.UnmatchedTasks) != len(tasks)-1 {
				t.Errorf("%d unmatched tasks, want %d", len(m.UnmatchedTasks), len(tasks)-1)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"2_mul.py": "b", "1_add.py": "a", "__init__.py": "", "_helper.py": "", "notes.txt": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "sub.py"), 0o755)
	tasks, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{
		{Name: "1_add", Path: filepath.Join(dir, "1_add.py"), Source: "a"},
		{Name: "2_mul", Path: filepath.Join(dir, "2_mul.py"), Source: "b"},
	}
	if !reflect.DeepEqual(tasks, want) {
		t.Errorf("Load = %+v, want %+v", tasks, want)
	}
	one, err := Load(filepath.Join(dir, "2_mul.py"))
	if err != nil || len(one) != 1 || one[0].Name != "2_mul" {
		t.Errorf("single file: %+v %v", one, err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("empty dir loaded")
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing path loaded")
	}
}
