package llm_test

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/rollout/llm"
)

const src = `import triton

BLOCK = 128

def launch(x):
    grid = (x.numel() // BLOCK,)
    kernel[grid](x, BLOCK=BLOCK)
    return x
`

func edit(search, replace string) string {
	return "<<<<<<< SEARCH\n" + search + "\n=======\n" + replace + "\n>>>>>>> REPLACE\n"
}

func TestEdits(t *testing.T) {
	for _, tc := range []struct {
		name, text, want, err string
	}{
		{
			name: "one edit, in a fence with prose",
			text: "Use a bigger block:\n```\n" + edit("BLOCK = 128", "BLOCK = 1024") + "```\n",
			want: strings.Replace(src, "BLOCK = 128", "BLOCK = 1024", 1),
		},
		{
			name: "two edits applied in order, the second sees the first",
			text: edit("BLOCK = 128", "BLOCK = 256") + "and\n" + edit("BLOCK = 256", "BLOCK = 512"),
			want: strings.Replace(src, "BLOCK = 128", "BLOCK = 512", 1),
		},
		{
			name: "multi-line search and replace",
			text: edit("    grid = (x.numel() // BLOCK,)\n    kernel[grid](x, BLOCK=BLOCK)",
				"    grid = (triton.cdiv(x.numel(), BLOCK),)\n    kernel[grid](x, BLOCK=BLOCK, num_warps=8)"),
			want: strings.Replace(src, "    grid = (x.numel() // BLOCK,)\n    kernel[grid](x, BLOCK=BLOCK)",
				"    grid = (triton.cdiv(x.numel(), BLOCK),)\n    kernel[grid](x, BLOCK=BLOCK, num_warps=8)", 1),
		},
		{
			name: "empty replace deletes the line",
			text: "<<<<<<< SEARCH\nimport triton\n=======\n>>>>>>> REPLACE",
			want: strings.TrimPrefix(src, "import triton\n"),
		},
		{name: "mismatch", text: edit("BLOCK = 128", "BLOCK = 64") + edit("BLOCK = 999", "x"), err: "edit 2: search text not found"},
		{name: "whitespace must match", text: edit("grid = (x.numel() // BLOCK,)", "x"), err: "edit 1: search text not found"},
		{name: "part of a line is no match", text: edit("BLOCK", "B"), err: "edit 1: search text not found"},
		{name: "duplicate whole-line match", text: edit("    return x", "    return x\n    return x") + edit("    return x", "y"), err: "edit 2: search text matches 2 times"},
		{name: "no edits", text: "Just make it faster.", err: llm.ErrNoEdits.Error()},
		{name: "cut off", text: "<<<<<<< SEARCH\nBLOCK = 128\n=======\nBLOCK =", err: "edit 1: not terminated by >>>>>>> REPLACE (completion cut off?)"},
		{name: "missing divider", text: "<<<<<<< SEARCH\nBLOCK = 128\n>>>>>>> REPLACE", err: "edit 1: >>>>>>> REPLACE without ======="},
		{name: "empty search", text: edit("", "x"), err: "edit 1: empty search text"},
		{name: "nested search", text: "<<<<<<< SEARCH\n<<<<<<< SEARCH\n", err: "edit 1: <<<<<<< SEARCH before the previous edit ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edits, err := llm.ExtractEdits(tc.text)
			got := ""
			if err == nil {
				got, err = llm.ApplyEdits(src, edits)
			}
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestApplyEditsDuplicateMatches(t *testing.T) {
	code := "a = 1\nb = 2\na = 1\nc = 3\na = 1"
	_, err := llm.ApplyEdits(code, []llm.Edit{{Search: "a = 1", Replace: "a = 0"}})
	if err == nil || err.Error() != "edit 1: search text matches 3 times" {
		t.Errorf("err = %v, want matches 3 times", err)
	}
	// A longer search disambiguates; the match may end the code without a newline.
	got, err := llm.ApplyEdits(code, []llm.Edit{{Search: "c = 3\na = 1", Replace: "c = 4"}})
	if err != nil || got != "a = 1\nb = 2\na = 1\nc = 4" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestEditFormatParses(t *testing.T) {
	// The example in the prompt text must itself be a valid edit.
	edits, err := llm.ExtractEdits(llm.EditFormat)
	if err != nil || len(edits) != 1 || edits[0] != (llm.Edit{Search: "exact lines to find", Replace: "replacement lines"}) {
		t.Errorf("EditFormat parses to %+v, %v", edits, err)
	}
}

func FuzzExtractEdits(f *testing.F) {
	f.Add(edit("BLOCK = 128", "BLOCK = 1024"))
	f.Add("<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE")
	f.Fuzz(func(t *testing.T, text string) {
		edits, err := llm.ExtractEdits(text)
		if err != nil {
			if len(edits) != 0 {
				t.Errorf("error %v with %d edits", err, len(edits))
			}
			return
		}
		if len(edits) == 0 {
			t.Error("no error and no edits")
		}
		if out, err := llm.ApplyEdits(src, edits); err == nil && len(edits) == 1 && edits[0].Search == edits[0].Replace && out != src {
			t.Errorf("identity edit changed the code")
		}
	})
}
