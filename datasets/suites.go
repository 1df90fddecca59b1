package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// Suite is one directory of tasks, named by its base name (ci, level1, ...).
type Suite struct {
	Name  string
	Dir   string // absolute
	Level int    // from a "level<N>" name; 0 otherwise (ci, synthetic, ...)
	Tasks []Task
	// Settings come from the directory's suite.json, if it has one.
	Settings Settings
}

var levelName = regexp.MustCompile(`^level_?(\d+)$`)

// SolutionsDir is where a suite's hand-written solutions live: a sibling
// "solutions/<suite>" next to the suite directory.
func (s Suite) SolutionsDir() string {
	return filepath.Join(filepath.Dir(s.Dir), "solutions", s.Name)
}

// Solution is the path of task t's solution, or "" when it has none.
func (s Suite) Solution(t Task) string {
	p := filepath.Join(s.SolutionsDir(), t.Name+".py")
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p
	}
	return ""
}

// Suites finds the suites under path: a suite directory itself (it holds
// .py files), or a root such as datasets/ whose subdirectories are suites
// (solutions/ is not one). A path with no task anywhere is an error.
func Suites(path string) ([]Suite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("datasets.Suites: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("datasets.Suites: %s is a file; give the directory of a suite or of several", path)
	}
	if files, _ := PyFiles(abs); len(files) > 0 {
		s, err := loadSuite(abs)
		return []Suite{s}, err
	}
	dirs, err := SuiteDirs(abs)
	if err != nil {
		return nil, fmt.Errorf("datasets.Suites: %w", err)
	}
	var out []Suite
	for _, dir := range dirs {
		s, err := loadSuite(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("datasets.Suites: no task files (*.py) in %s or its subdirectories", path)
	}
	return out, nil
}

// SuiteDirs lists the suites of a root such as datasets/: its
// subdirectories that hold task files, sorted; solutions/ is not a suite.
func SuiteDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "solutions" {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if files, err := PyFiles(dir); err == nil && len(files) > 0 {
			dirs = append(dirs, filepath.Clean(dir))
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

func loadSuite(dir string) (Suite, error) {
	tasks, err := Load(dir)
	if err != nil {
		return Suite{}, err
	}
	settings, err := ReadSettings(dir)
	if err != nil {
		return Suite{}, err
	}
	name := filepath.Base(dir)
	return Suite{Name: name, Dir: dir, Tasks: tasks, Level: LevelOf(name), Settings: settings}, nil
}

// LevelOf is the level a suite's name gives: N for "level<N>", else 0.
func LevelOf(suite string) int {
	if m := levelName.FindStringSubmatch(suite); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
