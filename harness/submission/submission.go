package submission

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// How Extract found the code (logged and exported: never rename).
const (
	HowFence             = "fence"              // a closed fenced block
	HowFenceUnterminated = "fence_unterminated" // a fenced block left open at the end of the text
	HowText              = "text"               // the whole completion, which looks like code
	HowTextInProse       = "text_in_prose"      // unfenced code, with prose lines before or after it dropped
)

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

// ErrNoCode is wrapped by every error Extract returns. The gateway turns it
// into an invalid_submission verdict.
var ErrNoCode = errors.New("no code found in the completion")

// pythonInfo are the fence info words taken as Python (lowercased); "" is a
// bare fence.
var pythonInfo = map[string]bool{"": true, "python": true, "py": true, "python3": true, "py3": true, "triton": true}

// looksLikeCode: a line that starts an import, or the class a candidate must define.
var looksLikeCode = regexp.MustCompile(`(?m)^[ \t]*(?:import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import[ \t])|\bclass[ \t]+ModelNew\b`)

// definesModelNew: the block that holds the candidate's class.
var definesModelNew = regexp.MustCompile(`(?m)^[ \t]*class[ \t]+ModelNew\b`)

// chatToken is a chat template's control token, as a trainer that decodes with
// skip_special_tokens=False (OpenRLHF's remote reward path) leaves them in the
// text: <|im_end|> (Qwen, GPT), <|eot_id|> (Llama 3), <|endoftext|>,
// <｜end▁of▁sentence｜> and <｜Assistant｜> (DeepSeek's full-width bars), </s>
// and [/INST] (Llama 2, Mistral), <end_of_turn> and <eos> (Gemma). Right after
// a closing fence one turns the fence into a code line and a correct kernel
// into a compile error; a turn marker puts the response's opening fence on the
// prompt's last line. Each token, with the spaces around it, becomes a line
// break. (A kernel that holds one inside a string literal would break; none
// has a reason to.)
var chatToken = regexp.MustCompile(`[ \t]*(?:<\|[^|<>\n]{1,64}\|>|<｜[^｜<>\n]{1,64}｜>|</?s>|<(?:eos|bos|pad|end_of_turn|start_of_turn)>|\[/?INST\])[ \t]*`)

// Normalize is what Extract does to the text before anything else: a leading
// byte-order mark is dropped, CRLF line ends become LF, and chat control
// tokens become line breaks. Extracted code is always a substring of
// Normalize(text).
func Normalize(text string) string {
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return chatToken.ReplaceAllString(text, "\n")
}

// Extract returns the candidate code in an LLM completion and how it found it.
//
//  1. Among the fenced blocks (``` or ~~~, CommonMark rules: a fence is at
//     most 3 spaces indented; it closes on a line of the same character, at
//     least as long, and nothing else) whose info word is python, py,
//     python3, py3, triton or empty and whose content is not blank: the last
//     one that defines class ModelNew, else the last one. A usage example
//     after the kernel, or the task's Model quoted in the prompt ahead of it,
//     is not taken for the submission. A fence still open at the end of the
//     text runs to the end (a completion cut off by max_tokens).
//  2. Otherwise, when the text has no fenced block at all and looks like code
//     (a line starting with import / from … import, or class ModelNew), the
//     whole text, less a prose paragraph in front of the code and one after
//     it ("Here you go:" … "Hope this helps!"; see proseLine).
//  3. Otherwise an error wrapping ErrNoCode.
//
// The code has leading blank lines and trailing white space removed; it is
// otherwise the exact text, so line numbers in feedback match the block.
func Extract(text string) (code, how string, err error) {
	text = Normalize(text)
	blocks := fencedBlocks(text)
	var (
		langs []string
		pick  *block // the last Python block, until one that defines ModelNew; code is its text
	)
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		if !pythonInfo[b.lang] {
			langs = append(langs, b.lang)
			continue
		}
		c := trim(text[b.start:b.end])
		if c == "" {
			continue
		}
		if pick == nil {
			pick, code = b, c
		}
		if definesModelNew.MatchString(c) {
			pick, code = b, c
			break
		}
	}
	if pick != nil {
		if pick.closed {
			return code, HowFence, nil
		}
		return code, HowFenceUnterminated, nil
	}
	if len(blocks) > 0 {
		if len(langs) > 0 {
			slices.Reverse(langs)
			return "", "", fmt.Errorf("submission.Extract: %w: no Python block among the fenced blocks (%s)", ErrNoCode, strings.Join(langs, ", "))
		}
		return "", "", fmt.Errorf("submission.Extract: %w: every Python block is empty", ErrNoCode)
	}
	if looksLikeCode.MatchString(text) {
		if c, trimmed := dropProse(trim(text)); c != "" {
			if trimmed {
				return c, HowTextInProse, nil
			}
			return c, HowText, nil
		}
	}
	return "", "", fmt.Errorf("submission.Extract: %w", ErrNoCode)
}

// proseLine: an unindented sentence, not Python. It has a space, ends like a
// sentence (. ! ? or :), has no '=' and does not start with a keyword, so
// "def f(x):", "class A:", "else:" and "x = 1." stay code.
var proseLine = regexp.MustCompile(`^[A-Za-z][^=\n]* [^=\n]*[.!?:]$`)

var keywordLine = regexp.MustCompile(`^(?:async|await|class|def|del|elif|else|except|finally|for|from|global|if|import|lambda|nonlocal|pass|raise|return|try|while|with|yield|assert|break|continue|match|case)\b`)

// dropProse removes the prose lines in front of the first code line and the
// prose after the last blank line, when the code itself is left. trimmed
// says whether anything went.
func dropProse(text string) (code string, trimmed bool) {
	lines := strings.Split(text, "\n")
	isProse := func(l string) bool {
		return strings.TrimSpace(l) == "" || (proseLine.MatchString(l) && !keywordLine.MatchString(l))
	}
	start := 0
	for start < len(lines) && isProse(lines[start]) {
		start++
	}
	end := len(lines)
	for i := end - 1; i > start; i-- {
		if strings.TrimSpace(lines[i]) == "" {
			tail := true
			for _, l := range lines[i+1 : end] {
				tail = tail && isProse(l)
			}
			if tail {
				end = i
			}
			break
		}
	}
	if start == 0 && end == len(lines) {
		return text, false
	}
	code = trim(strings.Join(lines[start:end], "\n"))
	if !looksLikeCode.MatchString(code) {
		return text, false
	}
	return code, true
}

// trim drops leading blank lines (keeping the first code line's indentation)
// and trailing white space.
func trim(s string) string {
	s = strings.TrimRight(s, " \t\n\r\v\f")
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			return s
		}
		s = s[i+1:]
	}
}
