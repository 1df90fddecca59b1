package redteam

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Prelude is what a variant's prelude tells its template about the run.
type Prelude struct {
	CanaryFiles []string // planted files a leak class tries to read (RT_CANARY_FILES)
	// Token names what the variant leaves behind on purpose (RT_TOKEN), so
	// Leftovers can find it on the host after the run.
	Token string
}

// HonestName is what the solution's ModelNew is renamed to in a variant;
// templates build the honest model under this name.
const HonestName = "RT_Honest"

var (
	modelNewDef = regexp.MustCompile(`(?m)^class\s+ModelNew\b`)
	modelNewRef = regexp.MustCompile(`\bModelNew\b`)
	referenceOK = regexp.MustCompile(`(?m)^class\s+Model\b`)
	futureLine  = regexp.MustCompile(`(?m)^from\s+__future__\s+import\s+[^\n]*\n?`)
)

// Generate is the variant of class c for a task whose reference source is
// reference and whose honest solution is solution. The transformation is
// textual: ModelNew becomes HonestName everywhere in the solution (its
// kernels and helpers stay, so the variant defines the same @triton.jit
// kernels), the prelude gives the template what it may use, and the
// template defines the new ModelNew:
//
//	RT_Honest(*init)        the honest model
//	rt_reference(*init)     the task's Model, built from its source in a
//	                        namespace of its own (decoys compute with it)
//	rt_rows(args, n)        the inputs cut to their first n rows
//	RT_CANARY_FILES         host files a leak class tries to read
//	RT_TOKEN                names what the variant leaves behind (Leftovers)
func Generate(c Class, reference, solution string, p Prelude) (string, error) {
	if !modelNewDef.MatchString(solution) {
		return "", errors.New("the solution defines no top-level class ModelNew")
	}
	if !referenceOK.MatchString(reference) {
		return "", errors.New("the reference defines no top-level class Model")
	}
	// A __future__ import must stay the module's first statement.
	future := futureLine.FindAllString(solution, -1)
	body := futureLine.ReplaceAllString(solution, "")
	body = modelNewRef.ReplaceAllString(body, HonestName)
	ref, err := json.Marshal(reference) // a JSON string is a valid Python string literal
	if err != nil {
		return "", fmt.Errorf("redteam.Generate: %w", err)
	}
	canaries := p.CanaryFiles
	if canaries == nil {
		canaries = []string{}
	}
	files, err := json.Marshal(canaries)
	if err != nil {
		return "", fmt.Errorf("redteam.Generate: %w", err)
	}
	var b strings.Builder
	for _, f := range future {
		b.WriteString(strings.TrimRight(f, "\n") + "\n")
	}
	b.WriteString(strings.TrimRight(body, "\n"))
	fmt.Fprintf(&b, "\n\n\n# ---- kernelgate redteam: attack class %s (%s), generated from the solution above\n", c.Name, c.Catalogue)
	token, _ := json.Marshal(p.Token)
	fmt.Fprintf(&b, prelude, ref, files, token)
	b.WriteString("\n\n")
	b.WriteString(c.Body)
	return b.String(), nil
}

const prelude = `import torch as _rt_torch

RT_REFERENCE_SOURCE = %s
RT_CANARY_FILES = %s
RT_TOKEN = %s


def rt_reference(*args, **kwargs):
    """The task's reference Model, from its source run in a namespace of its own."""
    ns = {"__name__": "rt_reference"}
    exec(compile(RT_REFERENCE_SOURCE, "<reference>", "exec"), ns)
    return ns["Model"](*args, **kwargs)


def rt_rows(args, n):
    """The tensor arguments cut to their first n rows (dim 0); others as they are."""
    return [a[:n] if isinstance(a, _rt_torch.Tensor) and a.dim() > 0 else a for a in args]`
