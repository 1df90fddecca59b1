package llm

import (
	"regexp"
	"strings"
)

// block is one fenced code block of a completion.
type block struct {
	lang   string // the info string's first word, lowercased ("" for bare ```)
	code   string
	closed bool
}

var modelNew = regexp.MustCompile(`(?m)^\s*class\s+ModelNew\b`)

// ExtractCode returns the kernel in a completion: the last closed ```python
// (```py, ```python3 or bare ```) block that defines class ModelNew, else the
// last such block at all. ok is false when there is none; NoCodeReason says
// why. A block cut off by the end of the text (a completion stopped at max
// tokens) never counts: half a kernel is not worth an evaluation.
func ExtractCode(text string) (code string, ok bool) {
	code, reason := extractCode(text)
	return code, reason == ""
}

// NoCodeReason says why ExtractCode found no code in text ("" if it did),
// for the failed step's log.
func NoCodeReason(text string) string {
	_, reason := extractCode(text)
	return reason
}

func extractCode(text string) (string, string) {
	var last, lastModel string
	unterminated := false
	for _, b := range fencedBlocks(text) {
		switch {
		case !isPython(b.lang):
		case !b.closed:
			unterminated = true
		case strings.TrimSpace(b.code) == "":
		default:
			last = b.code
			if modelNew.MatchString(b.code) {
				lastModel = b.code
			}
		}
	}
	switch {
	case lastModel != "":
		return lastModel, ""
	case last != "":
		return last, ""
	case unterminated:
		return "", "code block not terminated (completion cut off?)"
	case strings.TrimSpace(text) == "":
		return "", "empty completion"
	default:
		return "", "no python code block in completion"
	}
}

func isPython(lang string) bool {
	switch lang {
	case "", "python", "py", "python3":
		return true
	}
	return false
}

// fencedBlocks splits text into its ``` blocks. A fence may be indented (a
// model writing inside a list) and longer than three backticks; it closes
// at a line of at least as many backticks and nothing else.
func fencedBlocks(text string) []block {
	var out []block
	var cur *block
	var lines []string
	fence := ""
	for line := range strings.Lines(strings.ReplaceAll(text, "\r\n", "\n")) {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if n := backticks(trimmed); n >= 3 {
				fence = trimmed[:n]
				lang, _, _ := strings.Cut(strings.TrimSpace(trimmed[n:]), " ")
				cur, lines = &block{lang: strings.ToLower(lang)}, nil
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
			cur.code, cur.closed = strings.Join(lines, ""), true
			out = append(out, *cur)
			cur = nil
			continue
		}
		lines = append(lines, line)
	}
	if cur != nil {
		cur.code = strings.Join(lines, "")
		out = append(out, *cur)
	}
	return out
}

func backticks(s string) int {
	return len(s) - len(strings.TrimLeft(s, "`"))
}
