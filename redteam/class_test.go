package redteam

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// TestClassesParse holds every embedded class to its header and to the
// catalogue: each names a class of docs/hacks.md, and at least 20 are
// meaningful on the CPU interpreter (CI's criterion).
func TestClassesParse(t *testing.T) {
	doc, err := os.ReadFile("../docs/hacks.md")
	if err != nil {
		t.Fatal(err)
	}
	catalogue := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		catalogue[m[1]] = true
	}
	classes := Classes()
	cpu := 0
	for _, c := range classes {
		if !catalogue[c.Catalogue] {
			t.Errorf("%s: catalogue %q is not a class of docs/hacks.md", c.Name, c.Catalogue)
		}
		if strings.Contains(c.Description, "\n") || len(c.Description) > 200 {
			t.Errorf("%s: the description must be one line of at most 200 bytes", c.Name)
		}
		if !c.GPUOnly && c.Gap == "" {
			cpu++
		}
	}
	if cpu < 20 {
		t.Errorf("%d classes are meaningful on the CPU without a known gap; want at least 20", cpu)
	}
}

func TestParseClassRejectsBadHeaders(t *testing.T) {
	body := "class ModelNew:\n    pass\n"
	for name, tc := range map[string]struct{ file, src, want string }{
		"no header":      {"a", body, `lacks "class"`},
		"name mismatch":  {"a", "# class: b\n# catalogue: cache\n# description: d\n" + body, `header says class "b"`},
		"unknown key":    {"a", "# class: a\n# catalogue: cache\n# description: d\n# colour: red\n" + body, `unknown header key "colour"`},
		"bad gpu_only":   {"a", "# class: a\n# catalogue: cache\n# description: d\n# gpu_only: yes\n" + body, "gpu_only"},
		"no description": {"a", "# class: a\n# catalogue: cache\n" + body, `lacks "description"`},
		"no ModelNew":    {"a", "# class: a\n# catalogue: cache\n# description: d\nx = 1\n", "defines no ModelNew"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadClasses(fstest.MapFS{"attacks/" + tc.file + ".py": {Data: []byte(tc.src)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	all := Classes()
	got, err := Select(all, []string{"cache_shape", " exit_early", "cache_shape"})
	if err != nil || len(got) != 2 || got[0].Name != "cache_shape" || got[1].Name != "exit_early" {
		t.Fatalf("Select: %v, %v", got, err)
	}
	if _, err := Select(all, []string{"no_such"}); err == nil || !strings.Contains(err.Error(), "cache_shape") {
		t.Fatalf("an unknown class must be an error listing the known ones, got %v", err)
	}
	if got, _ := Select(all, nil); len(got) != len(all) {
		t.Fatalf("no names must select every class")
	}
}
