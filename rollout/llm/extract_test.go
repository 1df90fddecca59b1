package llm_test

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/rollout/llm"
)

const kernel = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"

func TestExtractCode(t *testing.T) {
	for _, tc := range []struct {
		name, text, want, reason string
	}{
		{name: "python block", text: "Here:\n```python\n" + kernel + "```\nDone.", want: kernel},
		{name: "py tag", text: "```py\n" + kernel + "```", want: kernel},
		{name: "bare fence", text: "```\n" + kernel + "```", want: kernel},
		{name: "indented fence in a list", text: "1. the code:\n   ```python\n" + kernel + "   ```\n", want: kernel},
		{name: "crlf", text: "```python\r\nx = 1\r\n```\r\n", want: "x = 1\n"},
		{name: "prose", text: "I think you should use shared memory tiling.", reason: "no python code block in completion"},
		{name: "empty", text: "  \n", reason: "empty completion"},
		{name: "only another language", text: "```bash\npip install triton\n```", reason: "no python code block in completion"},
		{name: "empty block", text: "```python\n```", reason: "no python code block in completion"},
		{
			name: "two blocks, ModelNew in the first",
			text: "```python\n" + kernel + "```\nTest it with:\n```python\nprint(ModelNew())\n```",
			want: kernel,
		},
		{
			name: "two ModelNew blocks: the last wins",
			text: "Draft:\n```python\nclass ModelNew: # v1\n```\nBetter:\n```python\n" + kernel + "```",
			want: kernel,
		},
		{
			name: "no ModelNew: the last python block",
			text: "```python\na = 1\n```\n```bash\nls\n```\n```python\nb = 2\n```",
			want: "b = 2\n",
		},
		{name: "unterminated", text: "```python\n" + kernel + "    def forward(self, x):\n        return", reason: "code block not terminated (completion cut off?)"},
		{
			name: "closed block then a cut-off one",
			text: "```python\n" + kernel + "```\nNow faster:\n```python\nclass ModelNew(torch.nn",
			want: kernel,
		},
		{name: "longer fence holds a shorter one", text: "````python\ns = '''\n```\n'''\n````", want: "s = '''\n```\n'''\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := llm.ExtractCode(tc.text)
			if ok != (tc.reason == "") || got != tc.want {
				t.Errorf("ExtractCode = %q, %v; want %q, %v", got, ok, tc.want, tc.reason == "")
			}
			if r := llm.NoCodeReason(tc.text); r != tc.reason {
				t.Errorf("NoCodeReason = %q, want %q", r, tc.reason)
			}
		})
	}
}

func FuzzExtractCode(f *testing.F) {
	f.Add("```python\n" + kernel + "```")
	f.Add("````\n```\n")
	f.Add("text ``` python\n```")
	f.Fuzz(func(t *testing.T, text string) {
		code, ok := llm.ExtractCode(text)
		if ok != (llm.NoCodeReason(text) == "") || (ok && strings.TrimSpace(code) == "") {
			t.Errorf("ExtractCode(%q) = %q, %v; reason %q", text, code, ok, llm.NoCodeReason(text))
		}
		if ok && !strings.Contains(strings.ReplaceAll(text, "\r\n", "\n"), code) {
			t.Errorf("extracted code %q is not part of the text", code)
		}
	})
}
