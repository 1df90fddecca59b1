package redteam

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/redteam.md's class table from the class files")

const (
	tableStart = "<!-- classes: generated from redteam/attacks by `go test ./redteam -update` -->\n"
	tableEnd   = "<!-- end of classes -->\n"
)

// TestDocsListEveryClass holds docs/redteam.md's table to the class files:
// a class added, renamed or described anew must show there (-update writes it).
func TestDocsListEveryClass(t *testing.T) {
	const path = "../docs/redteam.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q around its class table", path, tableStart, tableEnd)
	}
	want := doc[:i+len(tableStart)] + MarkdownTable(Classes()) + doc[j:]
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's class table differs from the class files; run go test ./redteam -update", path)
}
