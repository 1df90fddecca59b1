package datasets

import (
	"slices"
	"testing"
)

func TestDeclared(t *testing.T) {
	tests := []struct {
		src, name string
		tags      []string
	}{
		{"\"\"\"Row softmax (fp32).\n\nMore.\"\"\"\nimport torch\nTAGS = [\"softmax\", 'reduction']\n", "Row softmax (fp32).", []string{"softmax", "reduction"}},
		{"# a comment\n\n'''One line only.'''\nTAGS = (\"a\",)\n", "One line only.", []string{"a"}},
		{"import torch\n\"\"\"not a docstring\"\"\"\n", "", []string{}},
		{"\"\"\"\n\"\"\"\nMY_TAGS = [\"x\"]\n", "", []string{}},
	}
	for _, tt := range tests {
		name, tags := Declared(tt.src)
		if name != tt.name || !slices.Equal(tags, tt.tags) {
			t.Errorf("Declared(%q) = %q %q, want %q %q", tt.src, name, tags, tt.name, tt.tags)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	ids := []string{"level1/10_a", "level1/2_b", "level1/1_c", "ci/8_x", "level1/02_d"}
	slices.SortFunc(ids, func(a, b string) int {
		if NaturalLess(a, b) {
			return -1
		}
		if NaturalLess(b, a) {
			return 1
		}
		return 0
	})
	want := []string{"ci/8_x", "level1/1_c", "level1/2_b", "level1/02_d", "level1/10_a"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %q, want %q", ids, want)
	}
}
