package redteam

import (
	"fmt"
	"strings"
)

// MarkdownTable is docs/redteam.md's table of classes, generated from the
// class files (TestDocsListEveryClass holds the doc to it).
func MarkdownTable(classes []Class) string {
	var b strings.Builder
	b.WriteString("| class | catalogue | GPU only | what the variant does |\n| --- | --- | --- | --- |\n")
	for _, c := range classes {
		gpu := ""
		if c.GPUOnly {
			gpu = "yes"
		}
		desc := c.Description
		if c.Gap != "" {
			desc += " (known gap: " + c.Gap + ")"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", c.Name, c.Catalogue, gpu, strings.ReplaceAll(desc, "|", "\\|"))
	}
	return b.String()
}
