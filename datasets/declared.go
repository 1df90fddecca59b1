package datasets

import (
	"regexp"
	"strings"
)

var (
	docFirst = regexp.MustCompile(`^(?:\s*#[^\n]*\n|\s*\n)*\s*[rRuU]?("""|''')\s*([^\n]*)`)
	tagsList = regexp.MustCompile(`(?m)^TAGS\s*=\s*[\[(]([^\])]*)[\])]`)
	quoted   = regexp.MustCompile(`"([^"\\]*)"|'([^'\\]*)'`)
)

// Declared is what a task file says about itself without running it: the
// module docstring's first line and its literal TAGS list (the harness reads
// the same two with Python's ast in a task check).
func Declared(source string) (name string, tags []string) {
	if m := docFirst.FindStringSubmatch(source); m != nil {
		name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[2]), m[1]))
	}
	tags = []string{}
	if m := tagsList.FindStringSubmatch(source); m != nil {
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			tags = append(tags, q[1]+q[2])
		}
	}
	return name, tags
}
