package submission

import (
	"errors"
	"strings"
	"testing"
)

const kernel = "import torch\nimport triton\n\nclass ModelNew(torch.nn.Module):\n    pass"

func TestExtract(t *testing.T) {
	tests := []extractCase{
		{"python fence", "Here it is:\n```python\n" + kernel + "\n```\nDone.", kernel, HowFence},
		{"py fence", "```py\nx = 1\n```", "x = 1", HowFence},
		{"Python3 fence, extra info", "```Python3 title=model.py\nx = 1\n```", "x = 1", HowFence},
		{"bare fence", "```\nx = 1\n```", "x = 1", HowFence},
		{"info after a space", "``` python\nx = 1\n```", "x = 1", HowFence},
		{"tilde fence", "~~~python\nx = 1\n~~~", "x = 1", HowFence},
		{"tilde fence holds backtick lines", "~~~python\ns = '''\n```\n'''\n~~~", "s = '''\n```\n'''", HowFence},
		{"several fences, last wins", "```python\nold = 1\n```\nbetter:\n```python\nnew = 2\n```\n", "new = 2", HowFence},
		{"non-python fence after is skipped", "```python\nx = 1\n```\nrun it:\n```bash\npython x.py\n```", "x = 1", HowFence},
		{"cuda fence skipped, python before it", "```python\nx = 1\n```\n```cuda\n__global__ void k(){}\n```", "x = 1", HowFence},
		{"empty last python block skipped", "```python\nx = 1\n```\n```python\n\n```", "x = 1", HowFence},
		{"backticks inside strings", "```python\ns = \"```\"\nt = '''a ``` b'''\n```", "s = \"```\"\nt = '''a ``` b'''", HowFence},
		{"indented fence-like line inside code", "```python\ndef f():\n    \"\"\"\n    ```\n    \"\"\"\n```", "def f():\n    \"\"\"\n    ```\n    \"\"\"", HowFence},
		{"longer outer fence", "````python\nx = 1\n```\nnot closed\n````", "x = 1\n```\nnot closed", HowFence},
		{"closing fence with trailing spaces", "```python\nx = 1\n```   \nafter", "x = 1", HowFence},
		{"closing fence with info does not close", "```python\nx = 1\n```python\ny = 2\n```", "x = 1\n```python\ny = 2", HowFence},
		{"inline span is not a fence", "Use ```x``` here.\n```python\nx = 1\n```", "x = 1", HowFence},
		{"unterminated fence at the end", "Thinking...\n```python\n" + kernel + "\n", kernel, HowFenceUnterminated},
		{"unterminated after a closed one", "```python\nx = 1\n```\n```python\ny = 2", "y = 2", HowFenceUnterminated},
		{"CRLF", "```python\r\nx = 1\r\ny = 2\r\n```\r\n", "x = 1\ny = 2", HowFence},
		{"BOM", "\ufeff```python\nx = 1\n```", "x = 1", HowFence},
		{"leading blank lines dropped, shared indentation taken off", "```python\n\n\n  x = 1\n  if x:\n      y = 2\n```", "x = 1\nif x:\n    y = 2", HowFence},
		{"raw code", kernel + "\n", kernel, HowText},
		{"raw code with BOM and CRLF", "\ufeff" + strings.ReplaceAll(kernel, "\n", "\r\n"), kernel, HowText},
		{"raw code, from-import", "from torch import nn\nx = 1", "from torch import nn\nx = 1", HowText},
		{"raw code, ModelNew only", "class ModelNew:\n    pass", "class ModelNew:\n    pass", HowText},
		{"unfenced after a sentence", "Here you go:\n" + kernel, kernel, HowTextInProse},
		{"unfenced between two paragraphs", "Sure! Here is a fused kernel.\nIt tiles rows.\n\n" + kernel + "\n\nHope this helps!", kernel, HowTextInProse},
		{"a trailing code paragraph stays", kernel + "\n\nx = ModelNew()", kernel + "\n\nx = ModelNew()", HowText},
		{"a docstring first stays", "\"\"\"Fused add.\"\"\"\n" + kernel, "\"\"\"Fused add.\"\"\"\n" + kernel, HowText},
		{"keyword lines ending in a colon stay", "class ModelNew(nn.Module):\n    pass\n\nelse:", "class ModelNew(nn.Module):\n    pass\n\nelse:", HowText},
	}
	checkExtract(t, tests)
}

// TestExtractChatTemplates: completions as trainers decode them with
// skip_special_tokens=False, prompt and all, one row per template and case.
func TestExtractChatTemplates(t *testing.T) {
	const usage = "m = ModelNew()\nprint(m(x))"
	prompt := "Write ModelNew for this model:\n```python\nimport torch\nclass Model(torch.nn.Module):\n    pass\n```\n"
	fence := "```python\n" + kernel + "\n```"
	tests := []extractCase{
		{"Qwen, EOS right after the fence", "<|im_start|>user\n" + prompt + "<|im_end|>\n<|im_start|>assistant\n" + fence + "<|im_end|>", kernel, HowFence},
		{"Qwen, EOS and endoftext on their own lines", "<|im_start|>assistant\n" + fence + "\n<|im_end|>\n<|endoftext|>", kernel, HowFence},
		{"Llama 3", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n" + prompt + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" + fence + "<|eot_id|>", kernel, HowFence},
		{"Llama 2 / Mistral, fence on the prompt's line", "<s>[INST] " + prompt + " [/INST] " + fence + "</s>", kernel, HowFence},
		{"DeepSeek full-width bars", "<｜begin▁of▁sentence｜><｜User｜>" + prompt + "<｜Assistant｜>" + fence + "<｜end▁of▁sentence｜>", kernel, HowFence},
		{"Gemma", "<bos><start_of_turn>user\n" + prompt + "<end_of_turn>\n<start_of_turn>model\n" + fence + "<end_of_turn>\n<eos>", kernel, HowFence},
		{"GPT-style endoftext", fence + "<|endoftext|>", kernel, HowFence},
		{"token glued to the last code line of an open fence", "```python\n" + kernel + "<|im_end|>", kernel, HowFenceUnterminated},
		{"Phi-4: im_sep right before the opening fence", "<|im_start|>assistant<|im_sep|>```python\n" + kernel + "\n```<|im_end|>", kernel, HowFence},
		{"CRLF and a token", strings.ReplaceAll("<|im_start|>assistant\n"+fence+"<|im_end|>", "\n", "\r\n"), kernel, HowFence},
		{"triton fence", "```triton\n" + kernel + "\n```<|im_end|>", kernel, HowFence},
		{"py fence", "```py\n" + kernel + "\n```</s>", kernel, HowFence},
		{"usage example after the kernel", fence + "\nUse it like this:\n```python\n" + usage + "\n```<|im_end|>", kernel, HowFence},
		{"two kernels: the last ModelNew wins", "```python\nclass ModelNew:\n    old = 1\n```\nBetter:\n" + fence + "<|im_end|>", kernel, HowFence},
		{"no block defines ModelNew: the last Python block", "```python\nx = 1\n```\n```python\ny = 2\n```<|im_end|>", "y = 2", HowFence},
		{"raw code with an EOS", kernel + "<|im_end|>", kernel, HowText},
		{"a token inside a string is a line break too", "```python\ns = 'a<|im_end|>b'\n```", "s = 'a\nb'", HowFence},
	}
	checkExtract(t, tests)
}

type extractCase struct{ name, text, code, how string }

func checkExtract(t *testing.T, tests []extractCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, how, err := Extract(tt.text)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if code != tt.code || how != tt.how {
				t.Errorf("Extract = %q, %q; want %q, %q", code, how, tt.code, tt.how)
			}
		})
	}
}

func TestExtractNoCode(t *testing.T) {
	tests := []struct{ name, text, detail string }{
		{"empty", "", ""},
		{"white space", " \n\t\r\n", ""},
		{"BOM only", "\ufeff", ""},
		{"prose", "I think the answer is to fuse the kernels. It is important to tile.", ""},
		{"prose mentioning import mid-line", "You should import triton and write a kernel.", ""},
		{"only non-python fences", "```cuda\n__global__ void k(){}\n```\n```bash\nimport x\n```", "cuda"},
		{"only empty python fences", "```python\n```\n~~~\n\n~~~", "empty"},
		{"unterminated empty fence", "Here:\n```python\n", "right after opening a code block"},
		{"only an EOS after an empty fence", "```python\n```<|im_end|>", "empty"},
		{"only chat tokens", "<|im_start|>assistant\n<|im_end|>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, how, err := Extract(tt.text)
			if !errors.Is(err, ErrNoCode) {
				t.Fatalf("Extract = %q, %q, %v; want ErrNoCode", code, how, err)
			}
			if !strings.Contains(err.Error(), "no code found in the completion") || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("error %q: want the ErrNoCode text and %q", err, tt.detail)
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", kernel, "```python\n" + kernel + "\n```", "```py\nx\n", "~~~\n```\n~~~",
		"````\n```\n````", "\ufeff```python\r\nx\r\n```", "  ```python\nx\n   ```", "```a`b\nx\n```",
		"prose\n```bash\nls\n```", "```\n\n```\n```python\ny",
		"<|im_start|>assistant\n```python\nx\n```<|im_end|>", "[INST] q [/INST] ```py\nclass ModelNew: pass\n```</s>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		code, how, err := Extract(text)
		if err != nil {
			if !errors.Is(err, ErrNoCode) || code != "" || how != "" {
				t.Fatalf("Extract(%q) = %q, %q, %v", text, code, how, err)
			}
			return
		}
		if strings.TrimSpace(code) == "" {
			t.Fatalf("Extract(%q): blank code with how %q", text, how)
		}
		// Every line of the code ends a line of the text, in order: the
		// code is the text's, less a shared indentation.
		norm, at := strings.Split(Normalize(text), "\n"), 0
		for _, l := range strings.Split(code, "\n") {
			for at < len(norm) && !strings.Contains(norm[at], l) {
				at++
			}
			if at == len(norm) {
				t.Fatalf("Extract(%q) = %q: line %q is not the text's", text, code, l)
			}
			at++
		}
		switch how {
		case HowFence, HowFenceUnterminated, HowText, HowTextInProse:
		default:
			t.Fatalf("Extract(%q): unknown how %q", text, how)
		}
	})
}
