package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/internal/llmtest"
	"github.com/kernelgate/kernelgate/rollout"
)

// A search evaluates through the result cache, on the real harness (as
// `kernelgate search` wires it): a kernel proposed again is a cache hit that
// points at the step that ran it, and is logged as one (cached, its source,
// no exec time), with the task named as the reward path names it.
func TestSearchRepeatsAreCacheHits(t *testing.T) {
	sup := realHarness(t)
	honest := repoFile(t, "datasets/solutions/ci/1_add_relu.py")
	srv := llmtest.New(t, llmtest.Reply("Here is the kernel:\n```python\n"+honest+"```\n"))
	dir := t.TempDir()
	b := openBus(t, dir)
	runSink(t, b, dir, "cache")
	m := newManager(t, b, &dispatch.Local{Bus: b, Harness: sup, Log: kgtest.Logger(t)}, nil, srv.URL())
	defer m.Close()
	opts := eval.DefaultOptions()
	opts.Seeds, opts.Timing = 1, false
	steps := runToEnd(t, m, Request{TaskID: taskID, Policy: rollout.PolicySample, Steps: 3, Seed: 1, Options: &opts}, 3*time.Minute)
	if len(steps) != 3 || steps[0].Verdict == nil || steps[0].Verdict.Status != eval.StatusCorrect || steps[0].Cached {
		t.Fatalf("steps %+v: want 3, the first run and correct", steps)
	}
	first := steps[0].EvalID
	for _, s := range steps[1:] {
		if !s.Cached || s.SourceEvalID != first || s.Verdict == nil || s.Verdict.Status != eval.StatusCorrect {
			t.Errorf("step %d: cached %v from %q (want %s), verdict %+v", s.Seq, s.Cached, s.SourceEvalID, first, s.Verdict)
		}
	}
	if n := sup.Stats()[0].JobsDone; n != 1 {
		t.Errorf("the harness ran %d evaluations, want 1", n)
	}
	kgtest.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		rows := readParquet[export.Evaluation](t, dir, export.TableEvaluations)
		if len(rows) != 3 {
			return fmt.Errorf("%d evaluations rows, want 3", len(rows))
		}
		for _, r := range rows {
			hit := r.EvalID != first
			ok := r.Cached == hit && (r.SourceEvalID != nil) == hit && (r.ExecMS == nil) == hit && r.TaskName == "1_add_relu"
			if ok && hit {
				ok = *r.SourceEvalID == first
			}
			if !ok {
				return fmt.Errorf("row %s: cached %v, source %v, exec %v, task_name %q", r.EvalID, r.Cached, r.SourceEvalID, r.ExecMS, r.TaskName)
			}
		}
		return nil
	})
}
