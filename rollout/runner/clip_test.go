package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/rollout"
)

// A step with huge texts still fits a bus value (< 1 MiB), says what it
// cut, and keeps its code whole (a resume needs it).
func TestClipKeepsStepsUnderOneMiB(t *testing.T) {
	big := strings.Repeat("é", 400<<10) // 800 KiB, two bytes a rune
	s := rollout.Step{Prompt: []rollout.Message{{Role: "user", Content: big}, {Role: "user", Content: big}},
		Completion: big, Code: "code"}
	c := clip(s)
	b, err := json.Marshal(Event{Seq: 1, Step: c})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 1<<20 {
		t.Fatalf("clipped step is %d bytes", len(b))
	}
	if !strings.Contains(c.Completion, "bytes cut]") || !strings.Contains(c.Prompt[0].Content, "bytes cut]") || c.Code != "code" {
		t.Fatalf("markers or code: %q / %q", c.Completion[len(c.Completion)-40:], c.Code)
	}
	if !strings.HasPrefix(c.Prompt[0].Content, "é") || len(s.Prompt[0].Content) != len(big) {
		t.Fatal("clip must cut on a rune boundary and not touch the caller's step")
	}
	small := rollout.Step{Completion: "short", Prompt: []rollout.Message{{Role: "user", Content: "p"}}}
	if got := clip(small); got.Completion != "short" || got.Prompt[0].Content != "p" {
		t.Fatalf("small step changed: %+v", got)
	}
}
