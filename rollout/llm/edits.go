package llm

import (
	"errors"
	"fmt"
	"strings"
)

// EditFormat tells a model how to write edits; the prompt templates include
// it verbatim, and ExtractEdits parses exactly this.
const EditFormat = `Answer with one or more search/replace edits, each exactly in this form:

<<<<<<< SEARCH
exact lines to find
=======
replacement lines
>>>>>>> REPLACE

The SEARCH lines must appear exactly once in the current code, character for
character, including indentation, and must be whole lines. Edits are applied
in order, each to the result of the previous one. An empty REPLACE section
deletes the lines.`

// The markers of EditFormat.
const (
	markSearch  = "<<<<<<< SEARCH"
	markDivider = "======="
	markReplace = ">>>>>>> REPLACE"
)

// Edit is one search/replace edit: whole lines, without a final newline.
type Edit struct {
	Search, Replace string
}

// ErrNoEdits means a completion held no edit in EditFormat.
var ErrNoEdits = errors.New("no SEARCH/REPLACE edits in completion")

// ExtractEdits parses every edit in text (anything around them, code fences
// included, is ignored). A malformed edit is an error naming it.
func ExtractEdits(text string) ([]Edit, error) {
	var edits []Edit
	var search, replace []string
	state := 0 // 0 outside, 1 in SEARCH, 2 in REPLACE
	for line := range strings.Lines(strings.ReplaceAll(text, "\r\n", "\n")) {
		line = strings.TrimSuffix(line, "\n")
		marker := strings.TrimRight(line, " \t")
		n := len(edits) + 1
		switch {
		case marker == markSearch && state != 0:
			return nil, fmt.Errorf("edit %d: %s before the previous edit ended", n, markSearch)
		case marker == markSearch:
			state, search, replace = 1, nil, nil
		case marker == markDivider && state == 1:
			state = 2
		case marker == markReplace && state == 2:
			if len(search) == 0 || strings.TrimSpace(strings.Join(search, "")) == "" {
				return nil, fmt.Errorf("edit %d: empty search text", n)
			}
			edits = append(edits, Edit{Search: strings.Join(search, "\n"), Replace: strings.Join(replace, "\n")})
			state = 0
		case marker == markReplace:
			return nil, fmt.Errorf("edit %d: %s without %s", n, markReplace, markDivider)
		case state == 1:
			search = append(search, line)
		case state == 2:
			replace = append(replace, line)
		}
	}
	switch {
	case state != 0:
		return nil, fmt.Errorf("edit %d: not terminated by %s (completion cut off?)", len(edits)+1, markReplace)
	case len(edits) == 0:
		return nil, ErrNoEdits
	}
	return edits, nil
}

// ApplyEdits applies edits in order. Each search text must match exactly
// once, as whole lines, in the code as the previous edits left it.
func ApplyEdits(code string, edits []Edit) (string, error) {
	for i, e := range edits {
		at := lineMatches(code, e.Search)
		switch len(at) {
		case 0:
			return "", fmt.Errorf("edit %d: search text not found", i+1)
		case 1:
		default:
			return "", fmt.Errorf("edit %d: search text matches %d times", i+1, len(at))
		}
		start, end := at[0], at[0]+len(e.Search)
		if e.Replace == "" && end < len(code) {
			end++ // deleting lines takes their newline along
		}
		code = code[:start] + e.Replace + code[end:]
	}
	return code, nil
}

// lineMatches returns where search occurs in code starting at a line start
// and ending at a line end.
func lineMatches(code, search string) []int {
	var at []int
	for off := 0; off <= len(code); {
		i := strings.Index(code[off:], search)
		if i < 0 {
			break
		}
		i += off
		end := i + len(search)
		if (i == 0 || code[i-1] == '\n') && (end == len(code) || code[end] == '\n') {
			at = append(at, i)
		}
		off = i + 1
	}
	return at
}
