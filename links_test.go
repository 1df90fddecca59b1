package kernelgate

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline Markdown link or image: [text](target) or
// [text](target "title"). Reference-style links are not used here.
var mdLink = regexp.MustCompile(`!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fencedCode drops fenced code blocks, whose brackets are code, not links.
var fencedCode = regexp.MustCompile("(?ms)^\\s*(```|~~~).*?^\\s*(```|~~~)\\s*$")

// Every relative link in every Markdown file of the repository names a file
// or folder that exists inside the repository, and every #anchor names a
// heading of its Markdown target: a clone carries its documents whole.
func TestMarkdownLinks(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(out))
	if len(files) < 5 {
		t.Fatalf("found %d Markdown files; is this the repository root?", len(files))
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, file := range files {
		if _, err := os.Stat(file); err != nil {
			continue // deleted in the working tree
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		body := fencedCode.ReplaceAllString(string(text), "")
		body = regexp.MustCompile("`[^`\n]*`").ReplaceAllString(body, "")
		for _, m := range mdLink.FindAllStringSubmatch(body, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				abs, _ := filepath.Abs(dest)
				if abs != root && !strings.HasPrefix(abs, root+string(filepath.Separator)) {
					t.Errorf("%s: link %q leaves the repository", file, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: no such file", file, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if anchors[dest] == nil {
				anchors[dest] = headingAnchors(t, dest)
			}
			if !anchors[dest][anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", file, target, dest, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// headingAnchors are the anchors GitHub gives file's headings: lowercased,
// punctuation but hyphens and underscores dropped, spaces as hyphens, a
// repeated one suffixed -1, -2, ...
func headingAnchors(t *testing.T, file string) map[string]bool {
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	body := fencedCode.ReplaceAllString(string(text), "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := anchorOf(title)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func anchorOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
