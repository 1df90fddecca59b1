package kernelgate

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kernelgate/kernelgate"

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// goList is `go list -json ./...`: every package of the module, as the
// toolchain sees it.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// selectors are the names a package's non-test files use from the package
// imported as path.
func selectors(t *testing.T, p listedPackage, path string) []string {
	t.Helper()
	var names []string
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range file.Imports {
			if v, _ := strconv.Unquote(imp.Path.Value); v == path {
				local = filepath.Base(path)
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && !slices.Contains(names, sel.Sel.Name) {
					names = append(names, sel.Sel.Name)
				}
			}
			return true
		})
	}
	slices.Sort(names)
	return names
}

// The vocabulary of an evaluation lives in eval, under one name: harness,
// which runs evaluations, re-exports none of it (an alias such as
// `type Verdict = eval.Verdict`, or a const or var that is only an eval
// name), so its importers and its own code say eval.Verdict alike.
func TestHarnessReexportsNothingOfEval(t *testing.T) {
	checked := 0
	for _, p := range goList(t) {
		if p.ImportPath != module+"/harness" {
			continue
		}
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range g.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Assign.IsValid() && isEvalName(s.Type) {
							t.Errorf("%s: type %s re-exports eval's: import eval", fset.Position(s.Pos()), s.Name.Name)
						}
					case *ast.ValueSpec:
						for i, v := range s.Values {
							if isEvalName(v) {
								t.Errorf("%s: %s re-exports eval's: import eval", fset.Position(s.Pos()), s.Names[i].Name)
							}
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file of package harness: the test reads nothing")
	}
}

// isEvalName reports whether e is eval.<Name> and nothing more.
func isEvalName(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "eval"
}

// eval is a leaf: everyone may import it, so it imports nothing of the
// module (an import back would be a cycle waiting to happen).
func TestEvalIsALeaf(t *testing.T) {
	for _, p := range goList(t) {
		if p.ImportPath != module+"/eval" {
			continue
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) || strings.Contains(imp, ".") {
				t.Errorf("eval imports %s", imp)
			}
		}
		return
	}
	t.Fatal("no package eval")
}

// The log's events are a leaf beside eval: every part that publishes one
// imports event, so event imports nothing of the module but eval.
func TestEventImportsOnlyEval(t *testing.T) {
	for _, p := range goList(t) {
		if p.ImportPath != module+"/event" {
			continue
		}
		for _, imp := range p.Imports {
			if imp != module+"/eval" && (strings.HasPrefix(imp, module) || strings.Contains(imp, ".")) {
				t.Errorf("event imports %s", imp)
			}
		}
		return
	}
	t.Fatal("no package event")
}

// Imports that would turn the layers upside down, each with its reason.
// A package of the left column imports none of the right's, directly or
// through another package of the module.
var forbiddenImports = []struct{ from, to, why string }{
	{"dispatch", "export", "dispatch logs verdicts as events (package event); export reads the log, and the queue must not depend on how it is written"},
	{"worker", "export", "the worker answers through dispatch, which logs the verdict"},
	{"event", "export", "events are what export reads, not the other way"},
}

func TestForbiddenImports(t *testing.T) {
	for _, rule := range forbiddenImports {
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+rule.from).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", rule.from, err)
		}
		listed := strings.Fields(string(deps))
		if !slices.Contains(listed, module+"/"+rule.from) {
			t.Fatalf("go list -deps ./%s does not list %s itself: the test reads nothing", rule.from, rule.from)
		}
		if slices.Contains(listed, module+"/"+rule.to) {
			t.Errorf("%s imports %s (directly or not): %s", rule.from, rule.to, rule.why)
		}
	}
}

// The job queue has one owner, dispatch (the evaluation service): the
// gateway hands it work and follows results, and neither writes queue
// messages nor talks to the queue's streams itself.
func TestTheGatewayBuildsNoQueueMessage(t *testing.T) {
	protocol := []string{"Job", "JobSubject", "Subject", "InteractiveSubject", "ResultsSubject", "PublishResult",
		"Scored", "Shared", "Verdict", "Wait", "Join", "Unwait", "WorkKey", "ShareKey", "CacheKey", "CacheEntry", "Claim", "Drain"}
	queueCalls := []string{"PublishJob", "QueueJob", "WithdrawJob", "Subscribe", "Notify", "PutResult", "PutBatch", "Results", "CacheGet"}
	for _, p := range goList(t) {
		if p.ImportPath != module+"/gateway" {
			continue
		}
		if !slices.Contains(p.Imports, module+"/dispatch") {
			t.Fatal("the gateway does not import dispatch: the test reads nothing")
		}
		for _, n := range selectors(t, p, module+"/dispatch") {
			if slices.Contains(protocol, n) {
				t.Errorf("the gateway uses dispatch.%s, the queue's wire protocol: ask dispatch.Service", n)
			}
		}
		fset := token.NewFileSet()
		for _, f := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains(queueCalls, sel.Sel.Name) {
					if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Bus" {
						t.Errorf("%s: the gateway calls Bus.%s: the queue is dispatch's", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
		return
	}
	t.Fatal("no package gateway")
}
