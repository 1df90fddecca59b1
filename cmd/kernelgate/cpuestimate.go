package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/eval"
)

// CPU mode runs a candidate through Triton's interpreter, which executes
// each program of the grid in Python over NumPy blocks: a task sized for an
// H200 cannot finish within an evaluation's timeout there. eval, bench and
// adapt estimate an evaluation's time from the task's size before they
// start one, and refuse (eval) or skip (bench, adapt) the tasks over it.
//
// The rates were measured on the project's 2-core development machine
// (shared, load average 1-3), `kernelgate eval --device cpu` with the
// repository's own solutions, on scaled-down copies of their tasks (held-out
// inputs made tiny, so the main inputs dominate) and on one full-size task.
// "call" is stage_ms.first_call, one candidate call; "eval" the whole
// evaluation (stage_ms.total); "per call" is eval over interpCalls(seeds):
//
//	task                                            seeds  call     eval     per call
//	leaky ReLU 1024x4096 fp32 (32 MiB)                 5   0.9 s    8.5 s    34 MiB/s
//	leaky ReLU 2048x4096 fp32 (64 MiB)                 5   2.3 s   24.4 s    24 MiB/s
//	leaky ReLU 8192x16384 fp32 (1024 MiB, level1/1)    1  27.2 s   44.1 s    23 MiB/s
//	LayerNorm 1024x8192 fp32 (64 MiB)                  5   3.1 s   30.2 s    19 MiB/s
//	GEMM+bias+ReLU 512^3 fp32 (0.27 GFLOP, 3 MiB)      5   0.38 s   2.9 s    0.83 GFLOP/s
//	GEMM+bias+ReLU 1024^3 fp32 (2.1 GFLOP, 12 MiB)     5   2.3 s   26.3 s    0.74 GFLOP/s
//	GEMM+bias+ReLU 1024^3 fp32 (2.1 GFLOP, 12 MiB)     1   2.5 s    3.1 s    0.70 GFLOP/s
//
// The judge's own work (inputs, buffers, comparisons, the reference) grows
// with the size too, which is why an evaluation is more than its calls. The
// rates below are the fast end, so the estimate is below every evaluation
// measured and a refused task really cannot finish on a machine like this
// one; one that passes may still time out (full-size LayerNorm at 2 seeds:
// 96 s estimated, killed at 120 s). MiB are a call's inputs, parameters and
// outputs, as the manifest and the meta pass count them; GFLOP its matmuls
// and convolutions.
const (
	interpMiBPerS   = 32.0
	interpGFLOPPerS = 1.0
)

// interpCalls is how many candidate calls an evaluation makes at seeds:
// one per seed, and after the first seed 0-2 calls the candidate cannot
// tell from trials (kgharness/judge/trials.py, 1 on average). The held-out input
// sets come on top; their sizes are not known before the reference loads.
func interpCalls(seeds int) int { return 2*max(seeds, 1) - 1 }

// With the defaults (5 seeds: 9 calls, 120 s) the threshold is 13.3 s per
// call: about 427 MiB of a memory-bound task, or 13 GFLOP. Of the manifest's
// tasks only the ci suite (~0 s), level1/29_global_avgpool and
// level3/8_squeeze_excitation (392 MiB: 110 s) are under it.

// noteCPUS is the estimate from which eval says how long it expects to take.
const noteCPUS = 10.0

// forceHelp is --force's help in eval, bench and adapt.
const forceHelp = "CPU mode: run tasks whose estimated time in Triton's interpreter is over the timeout (refused or skipped by default)"

// fitsCPU is eval's gate in CPU mode: the refusal, as an error, when the
// interpreter cannot finish t within o's timeout and force is off. It says
// on w what it expects when the estimate is long, or when it has none.
func fitsCPU(ctx context.Context, w io.Writer, ev evaluator, t workTarget, o eval.Options, force bool) error {
	wk, err := newSizer(ev, o).work(ctx, t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		fmt.Fprintf(w, "kernelgate: CPU mode: no estimate of %s (%v); evaluating it anyway\n", t.Task.Name, err)
		return nil
	}
	e := estimateCPU(t.Task.Name, wk, o)
	switch {
	case e.Over() && !force:
		return errors.New(e.Task + " is " + e.Refusal())
	case e.Over():
		fmt.Fprintf(w, "kernelgate: --force: CPU mode: %s: %s; it will most likely time out\n", e.Task, e)
	case e.Seconds >= noteCPUS:
		fmt.Fprintf(w, "kernelgate: CPU mode: %s: %s\n", e.Task, e)
	}
	return nil
}

// taskWork is what one forward call of a task moves and computes.
type taskWork struct {
	MiB, GFLOP float64
	From       string // "manifest" or "meta pass"
}

// cpuEstimate is an evaluation's time in Triton's interpreter.
type cpuEstimate struct {
	Task     string
	Work     taskWork
	Calls    int
	Seconds  float64
	TimeoutS int
}

func estimateCPU(task string, w taskWork, o eval.Options) cpuEstimate {
	calls := interpCalls(o.Seeds)
	s := float64(calls) * (w.MiB/interpMiBPerS + w.GFLOP/interpGFLOPPerS)
	return cpuEstimate{Task: task, Work: w, Calls: calls, Seconds: s, TimeoutS: o.TimeoutS}
}

// Over reports whether the interpreter cannot finish within the timeout.
func (e cpuEstimate) Over() bool { return e.Seconds > float64(e.TimeoutS) }

// String is the estimate and where its figures came from, for messages
// that name the task.
func (e cpuEstimate) String() string {
	return fmt.Sprintf("%.1f MiB and %.1f GFLOP per call (%s): about %.0f s for %d calls in Triton's interpreter at %.0f MiB/s and %.0f GFLOP/s, against a %d s timeout",
		e.Work.MiB, e.Work.GFLOP, e.Work.From, e.Seconds, e.Calls, interpMiBPerS, interpGFLOPPerS, e.TimeoutS)
}

// Refusal is the one-line reason a command gives for not running the task.
func (e cpuEstimate) Refusal() string {
	return "too large for CPU mode (no GPU): " + e.String() + "; run it on a GPU, raise --timeout, or pass --force to try anyway"
}

// workTarget is a task whose size is wanted.
type workTarget struct {
	Task eval.Task
	// Manifest is the manifest.json that may describe it, ID its id there.
	Manifest, ID string
}

// fileTarget is the target for a task file of a suite directory: the
// manifest next to the suite (datasets/manifest.json for datasets/level1),
// the id <suite>/<stem>.
func fileTarget(t eval.Task) workTarget {
	suite := filepath.Dir(t.Path)
	return workTarget{Task: t, Manifest: filepath.Join(filepath.Dir(suite), "manifest.json"), ID: filepath.Base(suite) + "/" + t.Name}
}

// sizer finds tasks' work: the manifest's figures when it has the task
// (cheap), else the harness's meta-device pass (a task check at depth
// shapes: one forward call on torch's meta device, milliseconds).
type sizer struct {
	ev        evaluator
	opts      eval.Options
	manifests map[string]datasets.Manifest
}

// evaluator is what the meta pass needs of a harness.Supervisor.
type evaluator interface {
	Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error)
}

func newSizer(ev evaluator, opts eval.Options) *sizer {
	return &sizer{ev: ev, opts: opts, manifests: map[string]datasets.Manifest{}}
}

// work is t's figures; an error says why there are none (the caller runs
// the task unestimated: the evaluation reports what is wrong with it).
func (s *sizer) work(ctx context.Context, t workTarget) (taskWork, error) {
	if w, ok := s.fromManifest(t); ok {
		return w, nil
	}
	v, err := s.ev.Evaluate(ctx, eval.Job{Task: t.Task, Options: s.opts, TaskCheck: true,
		Check: &eval.CheckOptions{Depth: "shapes"}})
	if err != nil {
		return taskWork{}, err
	}
	info := v.TaskInfo
	switch {
	case info == nil:
		return taskWork{}, fmt.Errorf("the meta pass said nothing (%s)", v.Status)
	case info.MetaError != "":
		return taskWork{}, fmt.Errorf("the meta pass failed: %s", info.MetaError)
	case info.InputBytes == nil || info.ParamBytes == nil || info.OutputBytes == nil:
		return taskWork{}, fmt.Errorf("the meta pass gave no sizes (%s)", v.Status)
	}
	w := taskWork{MiB: float64(*info.InputBytes+*info.ParamBytes+*info.OutputBytes) / (1 << 20), From: "meta pass"}
	if info.FLOPs != nil {
		w.GFLOP = float64(*info.FLOPs) / 1e9
	}
	return w, nil
}

// fromManifest is t's manifest entry's figures. The manifest holds no hash
// of the source, so an entry whose name is not the file's docstring line is
// taken for another version of the task and not used.
func (s *sizer) fromManifest(t workTarget) (taskWork, bool) {
	if t.Manifest == "" {
		return taskWork{}, false
	}
	m, ok := s.manifests[t.Manifest]
	if !ok {
		m, _ = datasets.ReadManifest(t.Manifest) // unreadable: as good as none
		s.manifests[t.Manifest] = m
	}
	e, ok := m.Find(t.ID)
	if !ok || e.MB == nil {
		return taskWork{}, false
	}
	if name, _ := datasets.Declared(t.Task.Source); name != e.Name {
		return taskWork{}, false
	}
	w := taskWork{MiB: *e.MB, From: "manifest"}
	if e.GFLOP != nil {
		w.GFLOP = *e.GFLOP
	}
	return w, true
}

// sized is a target's estimate, or why it has none.
type sized struct {
	Est cpuEstimate
	Err error
}

// estimateAll sizes every target, conc meta passes at a time. The error is
// ctx's: the run was interrupted.
func (s *sizer) estimateAll(ctx context.Context, targets []workTarget, conc int) ([]sized, error) {
	out := make([]sized, len(targets))
	for i, t := range targets { // the manifest first, with no goroutine
		if w, ok := s.fromManifest(t); ok {
			out[i].Est = estimateCPU(t.Task.Name, w, s.opts)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(conc, 1))
	for i, t := range targets {
		if out[i].Est.Work.From != "" {
			continue
		}
		g.Go(func() error {
			w, err := s.work(gctx, workTarget{Task: t.Task}) // no manifest: it was tried
			out[i] = sized{Est: estimateCPU(t.Task.Name, w, s.opts), Err: err}
			return nil
		})
	}
	_ = g.Wait()
	return out, ctx.Err()
}
