package submission

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernelgate/kernelgate/eval"
)

// Error signatures of verdicts worded here (logged and exported: never rename).
const (
	SignatureNoCode    = "no_code"   // no code in the completion
	SignatureTruncated = "truncated" // the completion was cut off
)

// FinishLength is the finish_reason (OpenAI, vLLM, SGLang) of a completion
// stopped by the token limit. Other values add nothing: the text decides.
const FinishLength = "length"

// TextHint is added to the feedback of a compile error in code that was not
// in a fenced block: the error may be prose that Extract took for code.
const TextHint = "(kernelgate found no fenced block and took the completion's text as the code: put the code in a ```python block)"

// NoCodeFeedback is the invalid_submission feedback for a completion in
// which Extract found no code (err is its error).
func NoCodeFeedback(err error) string {
	return "no code found: put the Python code of ModelNew in a ```python fenced block (" + err.Error() + ")"
}

// WithTextHint is a compile error's feedback with TextHint added when the
// code was not fenced (how is HowText or HowTextInProse).
func WithTextHint(feedback, how string) string {
	if (how == HowText || how == HowTextInProse) && !strings.Contains(feedback, TextHint) {
		return feedback + "\n" + TextHint
	}
	return feedback
}

// NoCode is the invalid_submission feedback and error signature of a
// completion in which Read found no code (err is its error): truncated when
// the text shows it was cut off, or the trainer says so (finishReason
// "length"), else no_code.
func NoCode(err error, finishReason string) (feedback, signature string) {
	var c *cutOff
	switch {
	case errors.As(err, &c):
		return "truncated: the completion was cut off before it gave any code: " + c.why +
			". Nothing was evaluated: answer within the token limit.", SignatureTruncated
	case finishReason == FinishLength:
		return `truncated: the completion was cut off (finish_reason "length") before it gave any code; ` +
			NoCodeFeedback(err), SignatureTruncated
	}
	return NoCodeFeedback(err), SignatureNoCode
}

// Form names what Word reads in a completion besides the verdict of its
// code: two completions of one form with the same code get the same words
// for the same verdict, so they may share one evaluation's answer. "" is a
// closed fence (or no code: that wording reads the completion itself).
func Form(completion, finishReason string) string {
	x, err := Read(completion)
	switch {
	case err != nil:
		return ""
	case x.How == HowFenceUnterminated:
		return "fence_open"
	case finishReason == FinishLength && x.AtEnd:
		return "length"
	case x.How == HowText || x.How == HowTextInProse:
		if x.AtEnd {
			return "text_end"
		}
		return "text"
	}
	return ""
}

// Word is the answer to a completion whose code (Read's) the harness judged
// v. A completion that was cut off (its code block never closes; or it has
// no fence, its code runs to the end of the text and fails to parse at its
// end, EndOfInput; or the trainer marked it finish_reason "length" and its
// code runs to the end) is answered invalid_submission with error signature
// "truncated", unless v is correct: a correct kernel is never rejected. What
// the harness said stays in the feedback and a warning; its hack flags go,
// since every reward function scores a hack flag as a hack and a cut-off
// kernel is no cheat. Otherwise Word adds TextHint to the compile error of
// unfenced code, and words a completion without code (NoCode).
//
// Word is per completion, after the result cache, which holds the harness's
// own verdicts by code: another completion may hold the same code closed.
// It words a verdict once: a shared answer passes here again.
func Word(completion, finishReason string, v eval.Verdict) eval.Verdict {
	if v.Status == eval.StatusCorrect || v.Status == eval.StatusHarnessError || v.TaskError != "" {
		return v
	}
	x, err := Read(completion)
	if err != nil {
		if v.Status == eval.StatusInvalidSubmission {
			v.Feedback, v.ErrorSignature = NoCode(err, finishReason)
		}
		return v
	}
	if v.Status == eval.StatusInvalidSubmission && v.ErrorSignature == SignatureTruncated {
		return v
	}
	why := ""
	switch {
	case x.How == HowFenceUnterminated:
		why = "its code block never closes (no closing ``` fence)"
	case finishReason == FinishLength && x.AtEnd:
		why = `the trainer marked it cut off (finish_reason "length") and its code runs to the end of the text`
	case v.Status == eval.StatusCompileError && x.AtEnd && x.How != HowFence:
		if msg, ok := EndOfInput(v.Feedback, x.Code); ok {
			why = "its code runs to the end of the text and ends mid-statement (" + msg + ")"
		}
	}
	if why != "" {
		return truncated(v, why)
	}
	if v.Status == eval.StatusCompileError {
		v.Feedback = WithTextHint(v.Feedback, x.How)
	}
	return v
}

// truncated is v answered as a cut-off completion's (Word).
func truncated(v eval.Verdict, why string) eval.Verdict {
	saw := string(v.Status)
	if len(v.HackFlags) > 0 {
		saw += " (" + strings.Join(v.HackFlags, ", ") + ")"
	}
	fb := "truncated: the completion was cut off: " + why + ". Its code was evaluated as it stands: the harness reported " + saw
	if f := strings.TrimSpace(v.Feedback); f != "" {
		fb += ":\n" + f
	}
	v.Warnings = append(slices.Clip(v.Warnings), "the completion was cut off; the harness reported "+saw+" for its code, answered as invalid_submission (truncated)")
	v.Status, v.ErrorSignature, v.HackFlags, v.Feedback = eval.StatusInvalidSubmission, SignatureTruncated, []string{}, clip(fb, maxFeedback)
	return v
}

// maxFeedback bounds a worded feedback (openapi.yaml: Verdict.feedback).
const maxFeedback = 4096

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-len(" …")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + " …"
}

// syntaxError is the first line of the harness's compile_error feedback for
// code Python cannot parse (kgharness/runner/loader.py).
var syntaxError = regexp.MustCompile(`^SyntaxError: (.+) \(candidate\.py, line ([0-9]+)\)$`)

// EndOfInput reports whether a compile error's feedback says that Python's
// parser reached the end of code inside a statement, as it does for code
// cut off mid-way: unexpected EOF, a bracket or triple-quoted string never
// closed, or at code's last line a block never indented or a string never
// ended. msg is the parser's message.
func EndOfInput(feedback, code string) (msg string, ok bool) {
	first, _, _ := strings.Cut(feedback, "\n")
	m := syntaxError.FindStringSubmatch(first)
	if m == nil {
		return "", false
	}
	msg = m[1]
	line, err := strconv.Atoi(m[2])
	last := strings.Count(code, "\n") + 1
	switch {
	case strings.Contains(msg, "unexpected EOF"), strings.Contains(msg, "was never closed"),
		strings.HasPrefix(msg, "unterminated triple-quoted string"):
		return msg, true
	case err == nil && line >= last &&
		(strings.HasPrefix(msg, "expected an indented block") || strings.HasPrefix(msg, "unterminated string literal")):
		return msg, true
	}
	return "", false
}
