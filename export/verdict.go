package export

import "github.com/kernelgate/kernelgate/eval"

// Verdict is the verdict row r keeps, its flattened fields back in their
// places, for an answer whose stored copy was lost (a batch's item read
// back from the log). What the row does not keep stays empty: wall_check,
// device_memory, reference_checked, the runtimes' min, max, mean and
// spread, the reference runtimes beyond their medians.
func (r Evaluation) Verdict() eval.Verdict {
	v := eval.Verdict{
		SchemaVersion: r.SchemaVersion, Status: eval.Status(r.Status), Compiled: r.Compiled, Correct: r.Correct,
		Speedup: clonePtr(r.Speedup), TimingMode: r.TimingMode,
		MaxAbsError: clonePtr(r.MaxAbsError), MaxRelError: clonePtr(r.MaxRelError),
		TrialsPassed: int(r.TrialsPassed), TrialsTotal: int(r.TrialsTotal),
		HackFlags: nonNil(r.HackFlags), Warnings: nonNil(r.Warnings),
		TritonLaunches: int(r.TritonLaunches), Coverage: clonePtr(r.Coverage),
		Feedback: r.Feedback, ErrorSignature: r.ErrorSignature, TaskError: r.TaskError, OutputTail: r.OutputTail,
		StageMS: map[string]float64{}, Retry: r.Retry, ReferenceShared: r.ReferenceShared,
		Env: r.Env, TaskName: r.TaskName, TaskHash: r.TaskHash, CodeHash: r.CodeHash,
		QueueWaitMS: clonePtr(r.QueueWaitMS), ExecMS: clonePtr(r.ExecMS),
	}
	for _, st := range r.StageTimes {
		v.StageMS[st.Stage] = st.MS
	}
	if r.RuntimeMedianMS != nil {
		v.Runtime = &eval.Runtime{MedianMS: *r.RuntimeMedianMS}
		if r.RuntimeP10MS != nil && r.RuntimeP90MS != nil {
			v.Runtime.P10MS, v.Runtime.P90MS = *r.RuntimeP10MS, *r.RuntimeP90MS
		}
		if r.RuntimeIterations != nil {
			v.Runtime.Iterations = int(*r.RuntimeIterations)
		}
	}
	v.RefRuntime, v.RefRuntimeBefore, v.RefRuntimeAfter = medianOnly(r.RefMedianMS), medianOnly(r.RefBeforeMedianMS), medianOnly(r.RefAfterMedianMS)
	if r.Atol != nil && r.Rtol != nil {
		v.Tolerance = &eval.Tolerance{Atol: *r.Atol, Rtol: *r.Rtol, DType: r.TolDType, Source: r.TolSource}
	}
	return v
}

func medianOnly(ms *float64) *eval.Runtime {
	if ms == nil {
		return nil
	}
	return &eval.Runtime{MedianMS: *ms}
}
