package llm

import (
	"strings"
	"testing"

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
	if err != nil || got != "a = 1\nBLOCK = 128\n" {
		t.Fatalf("Apply = %q, %v", got, err)
	}
	if _, err := x.Apply("a = 1\n", edits); err == nil {
		t.Fatal("a search text not in the code must fail")
	}
	if _, err := x.Edits("<<<<<<< SEARCH\nx\n=======\n"); err == nil {
		t.Fatal("a cut-off edit must fail")
	}
}
