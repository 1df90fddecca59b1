package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/harness/submission"
)

// eval reads a saved LLM answer as the gateway reads a completion: the same
// code from a plain file, a fenced answer and an unfenced one between prose.
func TestReadKernelExtractsLikeTheGateway(t *testing.T) {
	src, err := os.ReadFile("../../datasets/solutions/ci/1_add_relu.py")
	if err != nil {
		t.Fatal(err)
	}
	code := strings.TrimSpace(string(src))
	dir := t.TempDir()
	for _, tt := range []struct {
		name, text, how, note string
	}{
		{"plain file", string(src), submission.HowText, ""},
		{"prose then a fence", "Sure. Here is the kernel:\n\n```python\n" + code + "\n```\nIt fuses add and ReLU.\n", submission.HowFence, "last ```python block"},
		{"unfenced between prose", "Here you go:\n" + code + "\n\nHope this helps!\n", submission.HowTextInProse, "without the prose"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "answer.md")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			var note bytes.Buffer
			got, how, err := readKernel(path, &note)
			if err != nil || got != code || how != tt.how {
				t.Fatalf("readKernel = %d bytes, %q, %v; want the solution, %q", len(got), how, err, tt.how)
			}
			if !strings.Contains(note.String(), tt.note) || (tt.note == "" && note.Len() > 0) {
				t.Errorf("note %q, want %q", note.String(), tt.note)
			}
		})
	}
	path := filepath.Join(dir, "prose.md")
	os.WriteFile(path, []byte("I would fuse the two ops into one kernel."), 0o644)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"eval", "--task", "../../datasets/ci/1_add_relu.py", "--kernel", path}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "no code found") || !strings.Contains(stderr.String(), "```python block") {
		t.Errorf("prose only: exit %d, stderr %q; want a usage error naming the fence", code, stderr.String())
	}
}

// The whole path: a fenced answer file is evaluated correct; an unfenced one
// with a syntax error gets the fencing hint.
func TestEvalAnswerFile(t *testing.T) {
	needPython(t)
	src, _ := os.ReadFile("../../datasets/solutions/ci/1_add_relu.py")
	dir := t.TempDir()
	for _, tt := range []struct{ name, text, status, hint string }{
		{"fenced", "Here it is:\n```python\n" + string(src) + "```\n", "correct", ""},
		{"unfenced, broken", "Here you go:\n" + strings.Replace(string(src), "class ModelNew(nn.Module):", "class ModelNew(nn.Module)", 1), "compile_error", submission.TextHint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".md")
			os.WriteFile(path, []byte(tt.text), 0o644)
			var stdout, stderr bytes.Buffer
			run(context.Background(), []string{"eval", "--task", "../../datasets/ci/1_add_relu.py", "--kernel", path, "--json", "--seeds", "1"}, &stdout, &stderr)
			var v struct{ Status, Feedback string }
			if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
				t.Fatalf("stdout %q stderr %q: %v", stdout.String(), stderr.String(), err)
			}
			if v.Status != tt.status || !strings.Contains(v.Feedback, tt.hint) {
				t.Fatalf("status %s feedback %q; want %s with %q", v.Status, v.Feedback, tt.status, tt.hint)
			}
		})
	}
}
