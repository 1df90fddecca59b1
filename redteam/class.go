package redteam

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// attackFS holds the attack classes: one template per file.
//
//go:embed attacks/*.py
var attackFS embed.FS

// Class is one attack class: a template and what its header says.
type Class struct {
	Name        string // the file's stem; names the class in reports and --classes
	Catalogue   string // the class of docs/hacks.md it belongs to
	Description string // one line
	// GPUOnly marks a trick that exists only on a GPU (streams, the timing
	// loop): on the CPU interpreter its variants are not evaluated, since an
	// honest harness must judge them as the plain programs they are there.
	GPUOnly bool
	// Gap names a known harness gap the class exposes: its misses are
	// reported as the gap's, not as failures, and a class with a gap whose
	// variants are all caught fails the run (the gap closed: drop the line).
	Gap  string
	Body string // the template, header included
}

// Classes lists the embedded classes, sorted by name. The templates are part
// of the binary: a malformed one is a build defect (TestClassesParse).
func Classes() []Class {
	out, err := loadClasses(attackFS)
	if err != nil {
		panic("redteam: " + err.Error())
	}
	return out
}

func loadClasses(fsys fs.FS) ([]Class, error) {
	files, err := fs.Glob(fsys, "attacks/*.py")
	if err != nil {
		return nil, err
	}
	var out []Class
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		c, err := parseClass(strings.TrimSuffix(path.Base(f), ".py"), string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Class) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseClass reads the header: the leading "# key: value" comment lines.
// class must repeat the file's name, so a copied file cannot keep its
// original's name by mistake.
func parseClass(name, body string) (Class, error) {
	c := Class{Name: name, Body: body}
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		seen[key] = true
		switch key {
		case "class":
			if value != name {
				return c, fmt.Errorf("header says class %q; the file is %q", value, name)
			}
		case "catalogue":
			c.Catalogue = value
		case "description":
			c.Description = value
		case "gap":
			c.Gap = value
		case "gpu_only":
			if value != "true" && value != "false" {
				return c, fmt.Errorf("gpu_only %q: want true or false", value)
			}
			c.GPUOnly = value == "true"
		default:
			return c, fmt.Errorf("unknown header key %q", key)
		}
	}
	for _, k := range []string{"class", "catalogue", "description"} {
		if !seen[k] {
			return c, fmt.Errorf("header lacks %q", k)
		}
	}
	if c.Catalogue == "" || c.Description == "" {
		return c, fmt.Errorf("empty catalogue or description")
	}
	if !strings.Contains(body, "class ModelNew") {
		return c, fmt.Errorf("the template defines no ModelNew")
	}
	return c, nil
}

// Select is the classes named in names (all of them for none); an unknown
// name is an error that lists the known ones.
func Select(all []Class, names []string) ([]Class, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Class
	for _, n := range names {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(all, func(c Class) bool { return c.Name == n })
		if i < 0 {
			known := make([]string, len(all))
			for j, c := range all {
				known[j] = c.Name
			}
			return nil, fmt.Errorf("unknown attack class %q; known: %s", n, strings.Join(known, ", "))
		}
		if !slices.ContainsFunc(out, func(c Class) bool { return c.Name == n }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}
