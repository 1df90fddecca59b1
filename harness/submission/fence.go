package submission

import (
	"regexp"
	"strings"
)

// block is one fenced code block: its info word (lowercased), the byte
// range of its content in the text, and how it was opened.
type block struct {
	lang       string
	start, end int
	closed     bool
	char       byte // ` or ~
	n          int  // the opening run's length
	indent     int  // the opening line's indentation, in columns
	midLine    bool // opened after prose on the same line
}

// fencedBlocks finds the fenced code blocks of a Markdown text, in order.
// It follows CommonMark's fence rules where LLM output keeps them and bends
// them where models break them every day:
//
//   - An opening fence is a run of 3+ backticks or tildes at the start of a
//     line (any indentation: a fence inside a list item is indented), or at
//     the end of a line of prose followed only by an info word ("Here it
//     is: ```python"). A backtick fence's info string may not hold a
//     backtick, and a mid-line run that closes an inline span of its length
//     ("Use ```x``` here") opens nothing.
//   - The block closes on a line that starts (indented at most 3 columns
//     deeper than the opener, so an indented ``` inside a docstring stays
//     code) with a run of the same character at least as long, followed by
//     nothing, or by prose ("``` Hope this helps": the prose is dropped); a
//     run followed by a lone info word ("```python") is content, as
//     CommonMark has it. A run of that length glued to the end of the last
//     code line ("    return out```") closes it too.
//   - A line-start opener inside a block that was opened mid-line shows that
//     the mid-line run was prose ("put code in ```python fences"): the block
//     starts again there.
//   - A block left open runs to the end of the text.
func fencedBlocks(text string) []block {
	var (
		blocks []block
		open   bool
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
			if end, ok := closes(line, cur); ok {
				cur.end, cur.closed = pos+end, true
				blocks = append(blocks, cur)
				open = false
			} else if o, ok := lineStartOpener(line); ok && cur.midLine && o.lang != "" {
				cur = o
				cur.start = next
			}
		} else if o, ok := opener(line); ok {
			open, cur = true, o
			cur.start = next
		}
		pos = next
	}
	if open {
		cur.end = len(text)
		blocks = append(blocks, cur)
	}
	return blocks
}

// opener reads line as an opening fence, at its start or after prose.
func opener(line string) (block, bool) {
	if b, ok := lineStartOpener(line); ok {
		return b, true
	}
	return midLineOpener(line)
}

func lineStartOpener(line string) (block, bool) {
	indent, i := indentation(line)
	c, n := run(line, i)
	if n < 3 {
		return block{}, false
	}
	rest := line[i+n:]
	if c == '`' && strings.IndexByte(rest, '`') >= 0 {
		return block{}, false // an inline span
	}
	return block{lang: infoWord(rest), char: c, n: n, indent: indent}, true
}

// infoToken is what may follow a mid-line opener: one word, like a
// language tag ("Done." and "Thanks!" are prose).
var infoToken = regexp.MustCompile(`^[A-Za-z](?:[A-Za-z0-9_+#.:-]*[A-Za-z0-9_+#])?$`)

// midLineOpener: prose, then a fence run, then at most one info word, then
// the end of the line.
func midLineOpener(line string) (block, bool) {
	t := strings.TrimRight(line, " \t")
	i := len(t)
	for i > 0 && !isSpace(t[i-1]) && t[i-1] != '`' && t[i-1] != '~' {
		i--
	}
	info := t[i:]
	if info != "" && !infoToken.MatchString(info) {
		return block{}, false
	}
	j := i
	for j > 0 && isSpace(t[j-1]) {
		j--
	}
	if j == 0 || (t[j-1] != '`' && t[j-1] != '~') {
		return block{}, false
	}
	c, k := t[j-1], j
	for k > 0 && t[k-1] == c {
		k--
	}
	n, prose := j-k, t[:k]
	if n < 3 || strings.TrimSpace(prose) == "" || (c == '`' && hasRun(prose, c, n)) {
		return block{}, false
	}
	indent, _ := indentation(line)
	return block{lang: infoWord(info), char: c, n: n, indent: indent, midLine: true}, true
}

// closes reports whether line ends block b, and where its content ends
// within the line (0: the whole line is the fence).
func closes(line string, b block) (int, bool) {
	indent, i := indentation(line)
	if c, n := run(line, i); c == b.char && n >= b.n && indent <= b.indent+3 {
		rest := strings.TrimSpace(line[i+n:])
		// A lone info word after the run is content (CommonMark); several
		// words are prose after the fence.
		return 0, rest == "" || !infoToken.MatchString(rest)
	}
	// A run glued to the end of a code line.
	t := strings.TrimRight(line, " \t")
	k := len(t)
	for k > 0 && t[k-1] == b.char {
		k--
	}
	if len(t)-k >= b.n && strings.TrimSpace(t[:k]) != "" && strings.IndexByte(t[:k], b.char) < 0 {
		return k, true
	}
	return 0, false
}

// indentation is line's leading white space in columns (a tab is 4) and
// in bytes.
func indentation(line string) (cols, bytes int) {
	for bytes < len(line) && isSpace(line[bytes]) {
		if line[bytes] == '\t' {
			cols += 4
		} else {
			cols++
		}
		bytes++
	}
	return cols, bytes
}

// run is the run of backticks or tildes at line[i:] and its length.
func run(line string, i int) (byte, int) {
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0
	}
	j := i
	for j < len(line) && line[j] == line[i] {
		j++
	}
	return line[i], j - i
}

// hasRun reports whether s holds a run of exactly n c's.
func hasRun(s string, c byte, n int) bool {
	for i := 0; i < len(s); {
		if s[i] != c {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == c {
			j++
		}
		if j-i == n {
			return true
		}
		i = j
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// infoWord is the language of a fence's info string, lowercased: its first
// word, without a pandoc "{." or a ":file.py" after it.
func infoWord(info string) string {
	f := strings.Fields(info)
	if len(f) == 0 {
		return ""
	}
	w := strings.ToLower(strings.TrimLeft(f[0], "{."))
	if i := strings.IndexAny(w, ":{},;("); i >= 0 {
		w = w[:i]
	}
	return w
}

// pythonTag: the info words taken as Python; "" is a bare fence.
var pythonTag = regexp.MustCompile(`^(?:|py|python|py3|python3|python3\.[0-9]+|triton|ipython|ipython3)$`)

func isPython(lang string) bool { return pythonTag.MatchString(lang) }
