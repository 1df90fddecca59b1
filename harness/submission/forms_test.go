package submission

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// indent puts every non-blank line of s under prefix, as a model writes a
// block inside a list item.
func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}

// TestExtractEverydayForms: fences as models write them every day, each of
// which the gateway's or the search's extraction read wrong before they
// became one.
func TestExtractEverydayForms(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []extractCase{
		{"fence opened after prose on the same line", "Here it is: ```python\n" + kernel + "\n```\nDone.", kernel, HowFence},
		{"mid-line opener, bare", "Sure, the kernel: ```\n" + kernel + "\n```", kernel, HowFence},
		{"mid-line opener, tilde", "Code: ~~~py\n" + kernel + "\n~~~", kernel, HowFence},
		{"mid-line opener after an inline span", "Replace `torch.add` with this: ```python\n" + kernel + "\n```", kernel, HowFence},
		{"mid-line opener with CRLF", crlf("Here it is: ```Python\n" + kernel + "\n```\n"), kernel, HowFence},
		{"a mid-line run that was prose gives way to a line-start opener",
			"Put your code in ```python\nfences, like this:\n```python\n" + kernel + "\n```", kernel, HowFence},
		{"closing fence followed by prose", "```python\n" + kernel + "\n``` Hope this helps!\nAsk me anything.", kernel, HowFence},
		{"closing fence followed by a sentence, then a usage block", "```python\n" + kernel + "\n```This is the fused version.\n```python\nprint(1)\n```", kernel, HowFence},
		{"closing fence glued to the last code line", "```python\n" + kernel + "```\nDone.", kernel, HowFence},
		{"fence indented 4 in a list item", "1. Write the kernel:\n\n" + indent("```python\n"+kernel+"\n```", "    ") + "\n2. Run it.", kernel, HowFence},
		{"fence indented 3 in a list item, closer at 0", "1. Kernel:\n" + indent("```python\n"+kernel, "   ") + "\n```\n", kernel, HowFence},
		{"list item opener on the marker's line", "- Kernel: ```python\n" + indent(kernel, "  ") + "\n  ```\n- Done", kernel, HowFence},
		{"tabs in a list item", "1.\n" + indent("```python\n"+kernel+"\n```", "\t"), kernel, HowFence},
		{"tilde fence, CRLF", crlf("~~~python\n" + kernel + "\n~~~\n"), kernel, HowFence},
		{"tag PY", "```PY\n" + kernel + "\n```", kernel, HowFence},
		{"tag Python3.11", "```Python3.11\n" + kernel + "\n```", kernel, HowFence},
		{"tag with a file name", "```python:model_new.py\n" + kernel + "\n```", kernel, HowFence},
		{"pandoc tag", "```{.python}\n" + kernel + "\n```", kernel, HowFence},
		{"CRLF, no trailing newline kept", crlf("```python\n" + kernel + "\n\n\n```\n\n"), kernel, HowFence},
		{"an indented ``` in a docstring stays code", "```python\ns = '''\n    ```\n'''\n```", "s = '''\n    ```\n'''", HowFence},
		{"reasoning closed, then the answer", "<think>\nFuse the add.\n```python\nclass ModelNew: draft\n```\n</think>\n```python\n" + kernel + "\n```", kernel, HowFence},
		{"indented unfenced code after a sentence", "Here is the code:\n\n" + indent(kernel, "    "), kernel, HowTextInProse},
	}
	checkExtract(t, tests)
}

// A completion with ten code blocks: the last one that defines ModelNew is
// the submission, whatever follows it (usage, tests, other languages).
func TestExtractTenBlocks(t *testing.T) {
	var b strings.Builder
	want := ""
	for i := range 10 {
		switch {
		case i == 2 || i == 6:
			code := fmt.Sprintf("import torch\n\nclass ModelNew(torch.nn.Module):\n    version = %d", i)
			fmt.Fprintf(&b, "Attempt %d:\n```python\n%s\n```\n", i, code)
			want = code
		case i%3 == 0:
			fmt.Fprintf(&b, "Run it:\n```bash\npython test_%d.py\n```\n", i)
		default:
			fmt.Fprintf(&b, "Check it:\n```python\nm = ModelNew()\nprint(m, %d)\n```\n", i)
		}
	}
	code, how, err := Extract(b.String())
	if err != nil || code != want || how != HowFence {
		t.Fatalf("Extract = %q, %q, %v; want block 6: %q", code, how, err, want)
	}
}

func TestReadAtEnd(t *testing.T) {
	tests := []struct {
		name, text, how string
		atEnd           bool
	}{
		{"closed fence", "```python\n" + kernel + "\n```\n", HowFence, false},
		{"open fence", "```python\n" + kernel + "\n    def f(self", HowFenceUnterminated, true},
		{"open fence, then an EOS token", "```python\n" + kernel + "<|im_end|>", HowFenceUnterminated, true},
		{"plain code", kernel + "\n\n", HowText, true},
		{"code after a sentence", "Here you go:\n" + kernel, HowTextInProse, true},
		{"code before a paragraph of prose", kernel + "\n\nHope this helps!", HowTextInProse, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Read(tt.text)
			if err != nil || x.How != tt.how || x.AtEnd != tt.atEnd {
				t.Fatalf("Read = %+v, %v; want how %q, at end %v", x, err, tt.how, tt.atEnd)
			}
		})
	}
}

// A completion cut off before any code: the text says so (ErrCutOff).
func TestReadCutOffBeforeCode(t *testing.T) {
	tests := []struct{ name, text, detail string }{
		{"only a <think> that never ends", "<think>\nThe input is (64, 128); fuse the add and the ReLU so", "reasoning"},
		{"a <think> holding a whole kernel", "<think>\nDraft:\n```python\n" + kernel + "\n```\nNow check the mask", "reasoning"},
		{"after the prompt's chat tokens", "<|im_start|>user\nWrite it<|im_end|>\n<|im_start|>assistant\n<think>\nOkay", "reasoning"},
		{"a second <think> never ends", "<think>a</think>\nLet me think again.\n<think>\nhmm", "reasoning"},
		{"an open empty fence at the end", "Here is the kernel:\n```python\n", "opening a code block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Read(tt.text)
			if !errors.Is(err, ErrNoCode) || !errors.Is(err, ErrCutOff) || x.Code != "" {
				t.Fatalf("Read = %+v, %v; want ErrNoCode and ErrCutOff", x, err)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q does not say %q", err, tt.detail)
			}
		})
	}
	// An inline mention of the tag is no reasoning block.
	if code, _, err := Extract("I will not use <think> tags.\n```python\nx = 1\n```"); err != nil || code != "x = 1" {
		t.Errorf("inline <think>: %q, %v", code, err)
	}
}
