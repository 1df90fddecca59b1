package submission

import "strings"

// block is one fenced code block: its info word (lowercased) and the byte
// range of its content in the text.
type block struct {
	lang       string
	start, end int
	closed     bool
}

// fencedBlocks finds the fenced code blocks of a Markdown text, in order,
// following CommonMark's fence rules closely enough for LLM output: an
// opening fence is 3+ backticks or tildes indented by at most 3 spaces (a
// backtick fence's info string may not contain a backtick, which keeps
// ```inline``` spans out); the block closes on a line holding only a run of
// the same character at least as long; a block left open runs to the end.
func fencedBlocks(text string) []block {
	var (
		blocks []block
		open   bool
		char   byte
		length int
		cur    block
	)
	for pos := 0; pos < len(text); {
		lineEnd := strings.IndexByte(text[pos:], '\n')
		next := len(text)
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += pos
			next = lineEnd + 1
		}
		line := text[pos:lineEnd]
		if open {
			if c, n, rest, ok := fenceRun(line); ok && c == char && n >= length && strings.TrimSpace(rest) == "" {
				cur.end, cur.closed = pos, true
				blocks = append(blocks, cur)
				open = false
			}
		} else if c, n, rest, ok := fenceRun(line); ok && !(c == '`' && strings.IndexByte(rest, '`') >= 0) {
			open, char, length = true, c, n
			cur = block{lang: infoWord(rest), start: next}
		}
		pos = next
	}
	if open {
		cur.end = len(text)
		blocks = append(blocks, cur)
	}
	return blocks
}

// fenceRun reports whether line starts (after at most 3 spaces) with a run of
// 3 or more backticks or tildes, and returns the character, the run's length
// and the rest of the line.
func fenceRun(line string) (c byte, n int, rest string, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i == len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, "", false
	}
	c = line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, "", false
	}
	return c, j - i, line[j:], true
}

// infoWord is the first word of a fence's info string, lowercased.
func infoWord(info string) string {
	f := strings.Fields(info)
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(f[0])
}
