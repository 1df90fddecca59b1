package export

import (
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/reward"
)

// validFor is the API's valid for verdict v under the reward function
// called name ("" is the default): reward.Result.Valid, the one definition
// the gateway answers with. A name no function has says nothing of the
// candidate: false, as the worker answers an unknown function.
func validFor(name string, v eval.Verdict) bool {
	f, err := reward.Lookup(name)
	if err != nil {
		return false
	}
	return f(v).Valid
}

// IsValid reports whether r is a sample a trainer keeps: its valid column,
// or, in a file written before the column (null), the reward function's
// valid for the verdict columns every reward function reads.
func (r Evaluation) IsValid() bool {
	if r.Valid != nil {
		return *r.Valid
	}
	return validFor(r.RewardFn, eval.Verdict{
		Status: eval.Status(r.Status), Compiled: r.Compiled, Correct: r.Correct, Speedup: r.Speedup,
		TimingMode: r.TimingMode, HackFlags: r.HackFlags, TaskError: r.TaskError,
	})
}
