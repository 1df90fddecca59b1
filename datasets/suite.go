package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kernelgate/kernelgate/eval"
)

// Task is one reference problem file: Name is its stem ("19_gemm_relu"),
// Path its absolute path, Source its exact text (hashed as task_hash).
type Task = eval.Task

// Load reads a task suite: one .py file, or every .py file directly in a
// directory (in natural order, 2_x before 10_x; __init__.py and files starting with "_" are
// skipped). A directory without tasks is an error.
func Load(path string) ([]Task, error) {
	files, err := PyFiles(path)
	if err != nil {
		return nil, fmt.Errorf("datasets.Load: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("datasets.Load: no task files (*.py) in %s", path)
	}
	tasks := make([]Task, 0, len(files))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("datasets.Load: %w", err)
		}
		tasks = append(tasks, Task{Name: Stem(f), Path: f, Source: string(src)})
	}
	return tasks, nil
}

// PyFiles lists path itself if it is a file, else the .py files directly in
// it, with the same skipping rules as Load. Paths are absolute and sorted.
func PyFiles(path string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".py") || strings.HasPrefix(name, "_") {
			continue // "_" also covers __init__.py
		}
		out = append(out, filepath.Join(abs, name))
	}
	sort.Slice(out, func(i, j int) bool { return NaturalLess(out[i], out[j]) })
	return out, nil
}

// Stem is a file's base name without its extension.
func Stem(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
