package tasks

import (
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/harness"
)

func TestValidID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"ci/1_add_relu", true},
		{"level2/19_Gemm-ReLU", true},
		{"mine", true},
		{"a/b/c", true},
		{"", false},
		{"/ci/1", false},
		{"ci/", false},
		{"ci//1", false},
		{"ci/1.py", false},
		{"ci/../x", false},
		{"_hidden", false},
		{"with space", false},
		{"ci/1?x", false},
		{strings.Repeat("a", MaxIDLen+1), false},
	}
	for _, tt := range tests {
		if err := ValidID(tt.id); (err == nil) != tt.ok {
			t.Errorf("ValidID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
	}
}

func TestNewAndDefaultID(t *testing.T) {
	src := "import torch\n"
	id := DefaultID(src)
	if !strings.HasPrefix(id, "api/") || len(id) != 4+16 || ValidID(id) != nil {
		t.Errorf("DefaultID = %q", id)
	}
	if DefaultID(src) != id || DefaultID(src+"#") == id {
		t.Error("DefaultID is not a function of the source")
	}
	tk := New("ci/1_add", src, OriginSuite, time.Unix(10, 0))
	if tk.Name != "1_add" || tk.TaskHash != harness.HashSource(src) || tk.CreatedAt.Location() != time.UTC {
		t.Errorf("New = %+v", tk)
	}
	h := tk.Harness()
	if h.Name != "1_add" || h.Path != "/tasks/ci/1_add.py" || h.Source != src {
		t.Errorf("Harness = %+v", h)
	}
}

func TestPrompt(t *testing.T) {
	src := "class Model(nn.Module):\n    pass\n"
	p := Prompt(src)
	for _, want := range []string{"```python\n" + src + "```", "ModelNew", "@triton.jit", "get_init_inputs()", "single ```python fenced block"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}
