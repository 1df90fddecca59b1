package tasks

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
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
	hash := eval.HashSource(src)
	id := DefaultID(hash)
	if id != "api/"+hash[len("sha256:"):][:16] || ValidID(id) != nil {
		t.Errorf("DefaultID = %q", id)
	}
	// No id: the content-addressed one, from the hash New makes.
	if tk := New("", src, OriginAPI, time.Unix(10, 0)); tk.ID != id || tk.Name != id[len("api/"):] || tk.TaskHash != hash {
		t.Errorf("New without an id = %+v, want id %s and hash %s", tk, id, hash)
	}
	if New("", src+"#", OriginAPI, time.Time{}).ID == id {
		t.Error("the default id is not a function of the source")
	}
	tk := New("ci/1_add", src, OriginSuite, time.Unix(10, 0))
	if tk.Name != "1_add" || tk.TaskHash != hash || tk.CreatedAt.Location() != time.UTC {
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

// Ids come from URLs and bodies and become KV keys and URL paths: whatever
// ValidID accepts must be a valid NATS KV key (letters, digits, - _ = / .,
// no empty token) and need no escaping in a URL path.
func FuzzValidID(f *testing.F) {
	for _, s := range []string{"ci/1_add_relu", "a", "a/b", "../x", "a//b", "a.b", "é", "a/ b", strings.Repeat("x", 129)} {
		f.Add(s)
	}
	kvKey := regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)
	f.Fuzz(func(t *testing.T, id string) {
		if ValidID(id) != nil {
			return
		}
		if !kvKey.MatchString(id) || strings.Contains(id, "..") || strings.HasPrefix(id, ".") || strings.HasSuffix(id, ".") {
			t.Fatalf("ValidID accepted %q, not a KV key", id)
		}
		if esc := (&url.URL{Path: "/v1/tasks/" + id}).EscapedPath(); esc != "/v1/tasks/"+id {
			t.Fatalf("ValidID accepted %q, which a URL escapes to %q", id, esc)
		}
		if nameOf(id) == "" || len(id) > MaxIDLen {
			t.Fatalf("ValidID accepted %q", id)
		}
	})
}
