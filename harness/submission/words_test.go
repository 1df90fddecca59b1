package submission

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/eval"
)

// cutKernel is a kernel cut off inside forward, which then returns None.
const cutKernel = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        y = x + 1"

func TestWord(t *testing.T) {
	decoy := eval.Verdict{Status: eval.StatusRewardHack, HackFlags: []string{eval.FlagDecoy}, Compiled: true,
		Feedback: "mismatch in trial 0: output has type NoneType", Warnings: []string{"screen"}}
	never := eval.Verdict{Status: eval.StatusCompileError, Feedback: "SyntaxError: '(' was never closed (candidate.py, line 5)\n    y = f(x,"}
	colon := eval.Verdict{Status: eval.StatusCompileError, Feedback: "SyntaxError: expected ':' (candidate.py, line 4)\n    def forward(self, x)"}
	wrong := eval.Verdict{Status: eval.StatusIncorrect, Compiled: true, Feedback: "mismatch"}
	noCode := eval.Verdict{Status: eval.StatusInvalidSubmission, Feedback: "empty submission"}
	taskErr := eval.Verdict{Status: eval.StatusHarnessError, TaskError: "reference raised"}
	right := eval.Verdict{Status: eval.StatusCorrect, Correct: true, Compiled: true}
	cutCall := strings.TrimSuffix(cutKernel, "y = x + 1") + "y = f(x,"
	tests := []struct {
		name, completion, finish string
		in                       eval.Verdict
		status                   eval.Status
		signature, says          string
	}{
		{"open fence, harness says decoy", "```python\n" + cutKernel, "", decoy, eval.StatusInvalidSubmission, SignatureTruncated, "the harness reported reward_hack (decoy):\nmismatch"},
		{"open fence, correct: never rejected", "```python\n" + kernel, "", right, eval.StatusCorrect, "", ""},
		{"open fence, a task error is the task's", "```python\n" + cutKernel, "", taskErr, eval.StatusHarnessError, "", ""},
		{"plain code, finish_reason length", cutKernel, FinishLength, wrong, eval.StatusInvalidSubmission, SignatureTruncated, `finish_reason "length"`},
		{"plain code, finish_reason stop", cutKernel, "stop", wrong, eval.StatusIncorrect, "", ""},
		{"closed fence, finish_reason length: the fence closed", "```python\n" + cutKernel + "\n```", FinishLength, wrong, eval.StatusIncorrect, "", ""},
		{"plain code ending inside a call", cutCall, "", never, eval.StatusInvalidSubmission, SignatureTruncated, "ends mid-statement ('(' was never closed)"},
		{"plain code, another syntax error", cutKernel, "", colon, eval.StatusCompileError, "", TextHint},
		{"closed fence ending inside a call: the model's own error", "```python\n" + cutCall + "\n```", "", never, eval.StatusCompileError, "", "was never closed"},
		{"code, then prose: it did not end there", cutCall + "\n\nHope this helps!", "", never, eval.StatusCompileError, "", TextHint},
		{"only a <think> that never ends", "<think>\nFuse the add", "", noCode, eval.StatusInvalidSubmission, SignatureTruncated, "ends inside its reasoning"},
		{"prose cut by the token limit", "I would fuse the add and", FinishLength, noCode, eval.StatusInvalidSubmission, SignatureTruncated, "before it gave any code"},
		{"prose", "I would fuse the add and the relu.", "", noCode, eval.StatusInvalidSubmission, SignatureNoCode, "no code found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Word(tt.completion, tt.finish, tt.in)
			if v.Status != tt.status || v.ErrorSignature != tt.signature || !strings.Contains(v.Feedback, tt.says) {
				t.Fatalf("Word = %s %q: %q; want %s %q saying %q", v.Status, v.ErrorSignature, v.Feedback, tt.status, tt.signature, tt.says)
			}
			if tt.signature == SignatureTruncated && (len(v.HackFlags) != 0 || !strings.Contains(v.Feedback, "cut off")) {
				t.Errorf("truncated: flags %v, feedback %q", v.HackFlags, v.Feedback)
			}
			if again := Word(tt.completion, tt.finish, v); again.Feedback != v.Feedback || len(again.Warnings) != len(v.Warnings) {
				t.Errorf("worded twice: %q", again.Feedback)
			}
		})
	}
	v := Word("```python\n"+cutKernel, "", decoy)
	if len(v.Warnings) != 2 || !strings.Contains(v.Warnings[1], "reward_hack (decoy)") || len(decoy.Warnings) != 1 || decoy.HackFlags[0] != eval.FlagDecoy {
		t.Errorf("warnings %q; the harness's verdict %+v", v.Warnings, decoy)
	}
	long := decoy
	long.Feedback = strings.Repeat("é", 3000)
	if fb := Word("```python\n"+cutKernel, "", long).Feedback; len(fb) > maxFeedback || !strings.HasSuffix(fb, " …") {
		t.Errorf("feedback of %d bytes", len(fb))
	}
}

// EndOfInput reads the messages of Python 3.12's parser, as the harness
// words them (kgharness/runner/loader.py).
func TestEndOfInput(t *testing.T) {
	code := "import torch\nclass ModelNew:\n    def forward(self, x):"
	tests := []struct {
		feedback string
		want     bool
	}{
		{"SyntaxError: '(' was never closed (candidate.py, line 2)\n    x = f(1,", true},
		{"SyntaxError: unexpected EOF while parsing (candidate.py, line 3)\n    x = a \\", true},
		{"SyntaxError: unterminated triple-quoted string literal (detected at line 3) (candidate.py, line 2)\n    s = '''", true},
		{"SyntaxError: expected an indented block after function definition on line 3 (candidate.py, line 3)\n    def forward(self, x):", true},
		{"SyntaxError: expected an indented block after 'if' statement on line 1 (candidate.py, line 2)\n    x = 1", false},
		{"SyntaxError: unterminated string literal (detected at line 3) (candidate.py, line 3)\n    s = 'ab", true},
		{"SyntaxError: unterminated string literal (detected at line 1) (candidate.py, line 1)\n    s = 'ab", false},
		{"SyntaxError: invalid syntax (candidate.py, line 3)\n    x = a +", false},
		{"NameError: name 'tl' is not defined", false},
		{"", false},
	}
	for _, tt := range tests {
		if _, ok := EndOfInput(tt.feedback, code); ok != tt.want {
			t.Errorf("EndOfInput(%q) = %v, want %v", tt.feedback, ok, tt.want)
		}
	}
}

func TestForm(t *testing.T) {
	tests := []struct{ completion, finish, want string }{
		{"```python\n" + kernel + "\n```", "", ""},
		{"Here: ```python\n" + kernel + "\n``` Done!", FinishLength, ""},
		{"```python\n" + kernel, "", "fence_open"},
		{kernel, FinishLength, "length"},
		{kernel, "", "text_end"},
		{kernel + "\n\nHope this helps!", FinishLength, "text"},
		{"no code at all", FinishLength, ""},
	}
	for _, tt := range tests {
		if got := Form(tt.completion, tt.finish); got != tt.want {
			t.Errorf("Form(%q, %q) = %q, want %q", tt.completion, tt.finish, got, tt.want)
		}
	}
}
