package check

import (
	"path/filepath"
	"time"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
)

// Entry is r as a manifest entry, its solution path relative to the suites'
// root (datasets/). GPU figures come only from a GPU check.
func Entry(r Result, now time.Time) datasets.Entry {
	e := datasets.Entry{ID: r.ID, Level: r.Level, Tags: []string{}, Outputs: []datasets.Output{}}
	if info := r.Verdict.TaskInfo; info != nil {
		e.Name, e.Checked = info.Name, info.Depth
		if info.Tags != nil {
			e.Tags = info.Tags
		}
		for _, o := range info.Outputs {
			e.Outputs = append(e.Outputs, datasets.Output{Shape: o.Shape, DType: o.DType})
		}
		if len(info.Outputs) > 0 {
			e.DType = info.Outputs[0].DType
		}
		if info.FLOPs != nil {
			g := float64(*info.FLOPs) / 1e9
			e.GFLOP = &g
		}
		if info.InputBytes != nil && info.ParamBytes != nil && info.OutputBytes != nil {
			mb := float64(*info.InputBytes+*info.ParamBytes+*info.OutputBytes) / (1 << 20)
			e.MB = &mb
		}
	}
	if r.Solution != nil || r.Target.Solution != "" {
		root := filepath.Dir(filepath.Dir(r.Task.Path))
		if rel, err := filepath.Rel(root, r.Target.Solution); err == nil {
			e.Solution = filepath.ToSlash(rel)
		}
	}
	v := r.Verdict
	if v.TimingMode == eval.TimingGPU && v.RefRuntime != nil {
		e.GPU = &datasets.GPURun{Name: v.Env.GPUName, RefMS: v.RefRuntime.MedianMS,
			RefP10MS: v.RefRuntime.P10MS, RefP90MS: v.RefRuntime.P90MS, MeasuredAt: now.UTC().Format(time.DateOnly)}
		if s := r.Solution; s != nil && s.Status == eval.StatusCorrect && s.Speedup != nil && s.Runtime != nil {
			sp, ms := *s.Speedup, s.Runtime.MedianMS
			e.GPU.SolutionSpeedup, e.GPU.SolutionMS = &sp, &ms
		}
	}
	return e
}
