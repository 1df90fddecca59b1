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

// ErrNoCode is wrapped by every error Extract returns. The gateway turns it
// into an invalid_submission verdict.
var ErrNoCode = errors.New("no code found in the completion")

// ErrCutOff is wrapped, beside ErrNoCode, when the text shows that the
// completion was cut off before it gave any code: it ends inside its
// reasoning (a <think> that never closes) or right after opening a code
// block.
var ErrCutOff = errors.New("the completion was cut off")

// cutOff is the error of a completion cut off before any code.
type cutOff struct{ why string }

func (c *cutOff) Error() string {
	return ErrNoCode.Error() + ": " + ErrCutOff.Error() + ": " + c.why
}

func (c *cutOff) Is(target error) bool { return target == ErrNoCode || target == ErrCutOff }

// Extraction is the code Read found in a completion.
type Extraction struct {
	Code string
	How  string // HowFence, HowFenceUnterminated, HowText or HowTextInProse
	// AtEnd: nothing but white space (or chat control tokens) follows the
	// code, so a completion stopped by the token limit ends inside it.
	AtEnd bool
}

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
// tokens become line breaks. Every line of extracted code is the end of a
// line of Normalize(text).
func Normalize(text string) string {
	text = strings.TrimPrefix(text, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return chatToken.ReplaceAllString(text, "\n")
}

// thinkOpen is where a reasoning model (DeepSeek-R1, Qwen3, QwQ) starts
// its reasoning; </think> ends it.
var thinkOpen = regexp.MustCompile(`(?m)^[ \t]*<think>`)

// inReasoning reports whether text ends inside a <think> block.
func inReasoning(text string) bool {
	locs := thinkOpen.FindAllStringIndex(text, -1)
	return len(locs) > 0 && !strings.Contains(text[locs[len(locs)-1][1]:], "</think>")
}

// Extract is Read's code and how it was found.
func Extract(text string) (code, how string, err error) {
	x, err := Read(text)
	return x.Code, x.How, err
}

// Read finds the candidate code in an LLM completion.
//
//  1. A completion that ends inside its reasoning (a line-start <think> that
//     never closes) has no code: the answer never came (ErrCutOff).
//  2. Among the fenced blocks (``` or ~~~, fencedBlocks: opened at a line's
//     start, indented or not, or after prose on the same line; closed by a
//     fence line, prose after it dropped) whose info word is Python's
//     (python, py, python3, py3, triton, any case) or empty and whose content
//     is not blank: the last one that defines class ModelNew, else the last
//     one. A usage example after the kernel, or the task's Model quoted in the
//     prompt ahead of it, is not taken for the submission. A fence still open
//     at the end of the text runs to the end (a completion cut off by
//     max_tokens); one left open with nothing in it is ErrCutOff.
//  3. Otherwise, when the text has no fenced block at all and looks like code
//     (a line starting with import / from … import, or class ModelNew), the
//     whole text, less a prose paragraph in front of the code and one after
//     it ("Here you go:" … "Hope this helps!"; see proseLine).
//  4. Otherwise an error wrapping ErrNoCode.
//
// The code has leading blank lines and trailing white space removed, and the
// indentation all its lines share (a block inside a list item) taken off; it
// is otherwise the exact text, so line numbers in feedback match the block.
func Read(text string) (Extraction, error) {
	text = Normalize(text)
	if inReasoning(text) {
		return Extraction{}, fmt.Errorf("submission.Extract: %w", &cutOff{"it ends inside its reasoning (a <think> block that never closes)"})
	}
	blocks := fencedBlocks(text)
	var (
		langs []string
		pick  *block // the last Python block, until one that defines ModelNew; code is its text
		code  string
	)
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		if !isPython(b.lang) {
			langs = append(langs, b.lang)
			continue
		}
		c := clean(text[b.start:b.end])
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
			return Extraction{Code: code, How: HowFence}, nil
		}
		return Extraction{Code: code, How: HowFenceUnterminated, AtEnd: true}, nil
	}
	if len(blocks) > 0 {
		if last := blocks[len(blocks)-1]; !last.closed && isPython(last.lang) {
			return Extraction{}, fmt.Errorf("submission.Extract: %w", &cutOff{"it ends right after opening a code block"})
		}
		if len(langs) > 0 {
			slices.Reverse(langs)
			return Extraction{}, fmt.Errorf("submission.Extract: %w: no Python block among the fenced blocks (%s)", ErrNoCode, strings.Join(langs, ", "))
		}
		return Extraction{}, fmt.Errorf("submission.Extract: %w: every Python block is empty", ErrNoCode)
	}
	if looksLikeCode.MatchString(text) {
		c, head, tail := dropProse(trim(text))
		if c = clean(c); c != "" {
			x := Extraction{Code: c, How: HowText, AtEnd: !tail}
			if head || tail {
				x.How = HowTextInProse
			}
			return x, nil
		}
	}
	return Extraction{}, fmt.Errorf("submission.Extract: %w", ErrNoCode)
}

// proseLine: an unindented sentence, not Python. It has a space, ends like a
// sentence (. ! ? or :), has no '=' and does not start with a keyword, so
// "def f(x):", "class A:", "else:" and "x = 1." stay code.
var proseLine = regexp.MustCompile(`^[A-Za-z][^=\n]* [^=\n]*[.!?:]$`)

var keywordLine = regexp.MustCompile(`^(?:async|await|class|def|del|elif|else|except|finally|for|from|global|if|import|lambda|nonlocal|pass|raise|return|try|while|with|yield|assert|break|continue|match|case)\b`)

// dropProse removes the prose lines in front of the first code line and the
// prose after the last blank line, when the code itself is left. head and
// tail say what went.
func dropProse(text string) (code string, head, tail bool) {
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
			prose := true
			for _, l := range lines[i+1 : end] {
				prose = prose && isProse(l)
			}
			if prose {
				end = i
			}
			break
		}
	}
	if start == 0 && end == len(lines) {
		return text, false, false
	}
	code = trim(strings.Join(lines[start:end], "\n"))
	if !looksLikeCode.MatchString(code) {
		return text, false, false
	}
	return code, start > 0, end < len(lines)
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

// Code is code in the form every path hashes it: leading blank lines and
// trailing white space removed, and the indentation every line shares taken
// off. Read's code is in this form; code made another way (a search's edits
// applied to a kernel) is put in it too, so the same kernel has one
// code_hash, and one result-cache entry, whatever made it.
func Code(s string) string { return clean(s) }

// clean is trim, then the indentation every non-blank line shares taken
// off: a block inside a list item is indented as a whole, and Python
// refuses a module whose first line is indented.
func clean(s string) string {
	s = trim(s)
	lines := strings.Split(s, "\n")
	margin, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			margin, first = ind, false
			continue
		}
		n := 0
		for n < len(margin) && n < len(ind) && margin[n] == ind[n] {
			n++
		}
		margin = margin[:n]
	}
	if margin == "" {
		return s
	}
	for i, l := range lines {
		if strings.HasPrefix(l, margin) {
			lines[i] = l[len(margin):]
		} else {
			lines[i] = strings.TrimLeft(l, " \t") // a blank line shorter than the margin
		}
	}
	return strings.Join(lines, "\n")
}
