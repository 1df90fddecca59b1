package llm

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/rollout"
)

func TestExtractorAdapter(t *testing.T) {
	var x rollout.Extractor = Extractor{}
	code, ok := x.Code("Here:\n```python\nclass ModelNew:\n    pass\n```\n")
	if !ok || !strings.Contains(code, "class ModelNew") {
		t.Fatalf("Code = %q, %v", code, ok)
	}
	if _, ok := x.Code("just prose"); ok {
		t.Fatal("prose has no code")
	}
	if r := (Extractor{}).NoCodeReason("just prose"); r == "" {
		t.Fatal("no reason for prose")
	}
	edits, err := x.Edits("no edits here")
	if err != nil || len(edits) != 0 {
		t.Fatalf("no edits: %v, %v (want none and no error: a whole-file answer is allowed)", edits, err)
	}
	edits, err = x.Edits("<<<<<<< SEARCH\nBLOCK = 64\n=======\nBLOCK = 128\n>>>>>>> REPLACE\n")
	if err != nil || len(edits) != 1 {
		t.Fatalf("Edits = %v, %v", edits, err)
	}
	got, err := x.Apply("a = 1\nBLOCK = 64\n", edits)
	if err != nil || got != "a = 1\nBLOCK = 128" {
		t.Fatalf("Apply = %q, %v", got, err)
	}
	if _, err := x.Apply("a = 1\n", edits); err == nil {
		t.Fatal("a search text not in the code must fail")
	}
	if _, err := x.Edits("<<<<<<< SEARCH\nx\n=======\n"); err == nil {
		t.Fatal("a cut-off edit must fail")
	}
}

// The search reads an answer's code as the reward path reads the same text
// sent as a completion: byte for byte, so the code_hash and the result cache
// are shared (a kernel followed by blank lines in its block, a fence left
// open, plain code, the last ModelNew block).
func TestExtractorCodeIsTheGatewaysCode(t *testing.T) {
	const k = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
	for _, text := range []string{
		"Here:\n```python\n" + k + "\n\n```\n",
		"```python\r\n" + strings.ReplaceAll(k, "\n", "\r\n") + "```\r\n",
		"```python\n" + k + "    def forward(self, x):\n        return",
		k,
		"```python\nclass ModelNew: # v1\n```\nBetter:\n```python\n" + k + "```\n```python\nprint(ModelNew())\n```",
		"Here it is: ```python\n" + k + "``` Hope this helps!",
	} {
		want, _, err := submission.Extract(text)
		got, ok := Extractor{}.Code(text)
		if !ok || err != nil || got != want {
			t.Errorf("Code(%q) = %q, %v; the reward path's %q, %v", text, got, ok, want, err)
		}
	}
	if _, ok := (Extractor{}).Code("<think>\nfirst, the mask"); ok {
		t.Error("an answer that ends inside its reasoning has no code")
	}
}

// Code made by applying edits is in the form the reward path gives the same
// kernel sent in a completion: an edit whose replacement ends in blank lines
// (or one that deletes the first lines) leaves no trailing or leading white
// space to change the code_hash.
func TestExtractorApplyGivesTheGatewaysCode(t *testing.T) {
	const parent = "import torch\nBLOCK = 64\nclass ModelNew(torch.nn.Module):\n    pass"
	for name, answer := range map[string]string{
		"trailing blank lines": "<<<<<<< SEARCH\n    pass\n=======\n    pass\n\n\n>>>>>>> REPLACE\n",
		"first line blanked":   "<<<<<<< SEARCH\nimport torch\n=======\n\n\n>>>>>>> REPLACE\n",
	} {
		edits, err := Extractor{}.Edits(answer)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Extractor{}.Apply(parent, edits)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := submission.Extract("```python\n" + got + "\n\n```\n")
		if err != nil || got != want || strings.HasSuffix(got, "\n") || strings.HasPrefix(got, "\n") {
			t.Errorf("%s: Apply gave %q; the reward path gives %q for it", name, got, want)
		}
	}
}
