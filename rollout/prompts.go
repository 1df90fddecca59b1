package rollout

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"github.com/kernelgate/kernelgate/eval"
)

// The prompt templates live in prompts/*.tmpl, one per call, plus
// common.tmpl (the skills block and the context chain). Each file's first
// line is {{/* version: N */}}; a step logs the versions of the files that
// made its prompt, so a change of wording shows in the search_steps table.
//
//go:embed prompts/*.tmpl
var promptFS embed.FS

// promptFuncs: trim drops the trailing newlines of code shown in a fence.
var promptFuncs = template.FuncMap{"trim": func(s string) string { return strings.TrimRight(s, "\n") }}

var (
	promptTmpl     = map[string]*template.Template{}
	promptVersions = map[string]string{} // file name without .tmpl -> version
	versionRE      = regexp.MustCompile(`^\{\{/\*\s*version:\s*(\S+)\s*\*/`)
)

func init() {
	common := mustRead("common")
	for _, name := range []string{"large", "sample", "revise", "tune", "refine"} {
		t := template.Must(template.New(name).Funcs(promptFuncs).Option("missingkey=error").Parse(common))
		promptTmpl[name] = template.Must(t.New(name).Parse(mustRead(name)))
	}
}

// mustRead reads prompts/name.tmpl and records its version; a template
// without one is a programming error caught by every test.
func mustRead(name string) string {
	b, err := promptFS.ReadFile("prompts/" + name + ".tmpl")
	if err != nil {
		panic(err)
	}
	m := versionRE.FindSubmatch(b)
	if m == nil {
		panic("rollout: prompts/" + name + ".tmpl has no version line")
	}
	promptVersions[name] = string(m[1])
	return string(b)
}

// promptVersion is what a step logs for the templates it used.
func promptVersion(names ...string) string {
	var parts []string
	for _, n := range append(names, "common") {
		parts = append(parts, n+":"+promptVersions[n])
	}
	return strings.Join(parts, " ")
}

// promptData is what the templates see.
type promptData struct {
	Task string // tasks.Prompt(source): the task and the rules
	// TaskBody is Task without its closing request for a whole file: the
	// reviser answers in prose and the tuner in edits.
	TaskBody string
	GPU      string
	Skills   []string // rule sentences
	Chain    []chainItem
	Pool     []chainItem
	Code     string // the code being revised (tuner)
	Guidance string // the reviser's answer (tuner)
}

// chainItem is one earlier node as a prompt shows it.
type chainItem struct {
	Node           int
	Action         string
	Code           string
	Status         string
	Speedup        string // "" when not correct or not timed
	ErrorSignature string
	Feedback       string // its first lines
}

// feedbackLines bounds the verdict feedback a prompt repeats per node: the
// first lines carry the error; the rest is mostly a traceback's tail.
const feedbackLines = 12

func itemOf(n *Node) chainItem {
	it := chainItem{Node: n.ID, Action: n.Action, Code: strings.TrimRight(n.Code, "\n")}
	if v := n.Verdict; v != nil {
		it.Status = string(v.Status)
		it.ErrorSignature = v.ErrorSignature
		lines := strings.Split(strings.TrimSpace(v.Feedback), "\n")
		if len(lines) > feedbackLines {
			lines = append(lines[:feedbackLines], "...")
		}
		it.Feedback = strings.Join(lines, "\n")
		if v.Status == eval.StatusCorrect {
			it.Speedup = "not measured"
			if v.Speedup != nil {
				it.Speedup = fmt.Sprintf("%.2fx", *v.Speedup)
			}
		}
	}
	return it
}

// taskBody cuts tasks.Prompt's closing paragraph (the request for one
// fenced file); the text is unchanged if that paragraph is not found.
func taskBody(prompt string) string {
	body, _, _ := strings.Cut(prompt, "\nReply with the complete")
	return strings.TrimRight(body, "\n") + "\n"
}

func render(name string, d promptData) (string, error) {
	var b bytes.Buffer
	if err := promptTmpl[name].ExecuteTemplate(&b, name, d); err != nil {
		return "", fmt.Errorf("rollout.render %s: %w", name, err)
	}
	return strings.TrimLeft(b.String(), "\n"), nil
}
