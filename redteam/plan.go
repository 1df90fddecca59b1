package redteam

import (
	"fmt"

	"github.com/kernelgate/kernelgate/eval"
)

// Target is one task with its honest solution.
type Target struct {
	ID       string // names the task in the report (suite/stem, or a registry id)
	Task     eval.Task
	Solution string // the honest solution's source
}

// Case is one evaluation of a run: a task's control (Class "") or one of
// its variants.
type Case struct {
	Target string // Target.ID
	Task   eval.Task
	Class  *Class // nil for the control
	Code   string
	Token  string // its RT_TOKEN
	// Skip says why the case is not evaluated ("" when it is): a GPU-only
	// class on the CPU interpreter, or a variant that could not be generated.
	Skip string
}

// PlanOptions shape the cases.
type PlanOptions struct {
	// SkipGPUOnly leaves GPU-only classes unevaluated (the CPU interpreter).
	SkipGPUOnly bool
	// CanaryFiles are host paths planted with secrets, for the leak classes.
	CanaryFiles []string
	// Nonce makes the variants' tokens unique to the run (a run id, or
	// NewSecret()); each variant's token is Nonce-<its index>- (delimited, so one
	// token is never part of another).
	Nonce string
}

// Plan is every case of a run: per target its control, then one variant per
// class, in the order given.
func Plan(targets []Target, classes []Class, o PlanOptions) []Case {
	var out []Case
	for _, t := range targets {
		out = append(out, Case{Target: t.ID, Task: t.Task, Code: t.Solution})
		for i := range classes {
			c := &classes[i]
			cs := Case{Target: t.ID, Task: t.Task, Class: c, Token: fmt.Sprintf("%s-%d-", o.Nonce, len(out))}
			switch code, err := Generate(*c, t.Task.Source, t.Solution, Prelude{CanaryFiles: o.CanaryFiles, Token: cs.Token}); {
			case err != nil:
				cs.Skip = fmt.Sprintf("not generated: %v", err)
			case c.GPUOnly && o.SkipGPUOnly:
				cs.Code, cs.Skip = code, "gpu_only: no streams or timing loop on the CPU interpreter, where it is honestly the program it is"
			default:
				cs.Code = code
			}
			out = append(out, cs)
		}
	}
	return out
}

// Result is a case's evaluation: its verdict, or why there is none.
type Result struct {
	Verdict *eval.Verdict
	Err     string
}
