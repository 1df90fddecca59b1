package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// `bench --fidelity` on the real harness in CPU mode: both passes run, and
// since the interpreter times nothing, every kernel is listed as excluded
// with the reason and the report says nothing is comparable (exit 0).
func TestBenchFidelityCPU(t *testing.T) {
	needPython(t)
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"bench", "--fidelity", "--tasks", "../../datasets/ci", "--kernels", "../../datasets/solutions/ci",
		"--repeat", "1", "--seeds", "1", "--concurrency", "2", "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	out := stdout.String()
	for _, s := range []string{"2 in flight (full)", "excluded from the statistics (8)", "timing not comparable on CPU",
		"no kernel is comparable: all 8 excluded", "full pass (2 in flight): 8 evaluations", "statuses: correct=8", "c1 pass (1 in flight): 8 evaluations"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	kernels, _ := filepath.Glob("../../datasets/solutions/ci/*.py")
	if len(kernels) != 8 {
		t.Fatalf("%d ci solutions, want 8", len(kernels))
	}
	for _, k := range kernels {
		name := filepath.Base(k)
		if !strings.Contains(out, strings.TrimSuffix(name, ".py")+" / "+name+": timing not comparable on CPU") {
			t.Errorf("kernel %s not listed with its reason:\n%s", name, out)
		}
	}
	if strings.Contains(out, "PARTIAL") || strings.Contains(out, "|RATIO-1|") {
		t.Errorf("unexpected partial mark or empty table:\n%s", out)
	}
}

// `bench --fidelity --json`: one object with the documented fields, both
// passes' plain bench reports inside (one task, to keep it short).
func TestBenchFidelityJSON(t *testing.T) {
	needPython(t)
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"bench", "--fidelity", "--json", "--tasks", "../../datasets/ci/1_add_relu.py",
		"--kernels", "../../datasets/solutions/ci", "--seeds", "1", "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	var obj struct {
		Partial    *bool  `json:"partial"`
		Repeat     int    `json:"repeat"`
		Percentile string `json:"percentile"`
		Passes     []struct {
			Name        string `json:"name"`
			Concurrency int    `json:"concurrency"`
			Report      *struct {
				Evals       int            `json:"evals"`
				EvalsPerSec float64        `json:"evals_per_s"`
				Statuses    map[string]int `json:"statuses"`
				Rows        []struct {
					TimingMode string   `json:"timing_mode"`
					Speedup    *float64 `json:"speedup"`
				} `json:"rows"`
			} `json:"report"`
		} `json:"passes"`
		Kernels  []json.RawMessage `json:"kernels"`
		Excluded []struct {
			Task, Kernel, Reason string
		} `json:"excluded"`
		Summary map[string]any `json:"summary"`
		Notes   []string       `json:"notes"`
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	if dec.More() {
		t.Fatal("stdout holds more than one object")
	}
	if obj.Partial == nil || *obj.Partial || obj.Repeat != 1 || obj.Percentile != "nearest-rank" || len(obj.Passes) != 2 {
		t.Fatalf("object: %+v", obj)
	}
	for i, name := range []string{"full", "c1"} {
		p := obj.Passes[i]
		if p.Name != name || p.Report == nil || p.Report.Evals != 1 || p.Report.Statuses["correct"] != 1 ||
			len(p.Report.Rows) != 1 || p.Report.Rows[0].TimingMode != "cpu_interpreter" || p.Report.Rows[0].Speedup != nil {
			t.Errorf("pass %d: %+v", i, p)
		}
	}
	if obj.Passes[1].Concurrency != 1 {
		t.Errorf("c1 pass at concurrency %d", obj.Passes[1].Concurrency)
	}
	if len(obj.Kernels) != 0 || len(obj.Excluded) != 1 || obj.Excluded[0].Task != "1_add_relu" ||
		!strings.Contains(obj.Excluded[0].Reason, "timing not comparable on CPU") {
		t.Errorf("kernels %s excluded %+v", obj.Kernels, obj.Excluded)
	}
	for _, k := range []string{"compared", "excluded", "deviation_p50", "deviation_p90", "deviation_max", "within_3pct", "within_10pct"} {
		if _, ok := obj.Summary[k]; !ok {
			t.Errorf("summary lacks %q: %v", k, obj.Summary)
		}
	}
	if obj.Summary["compared"] != 0.0 || obj.Summary["deviation_p50"] != nil || len(obj.Notes) == 0 {
		t.Errorf("summary %v notes %v", obj.Summary, obj.Notes)
	}
}

// No pair at all is an error before any supervisor starts (no Python needed).
func TestBenchFidelityNeedsPairs(t *testing.T) {
	code, _, stderr := runCmd(t, "bench", "--fidelity", "--tasks", "../../datasets/ci", "--kernels", t.TempDir())
	if code != exitFailed || !strings.Contains(stderr, "no kernel in") {
		t.Fatalf("exit %d; stderr %q", code, stderr)
	}
}

// gatedEval answers each job with the next verdict or error from its
// channel, so the test decides when an evaluation finishes.
type gatedEval struct{ next chan gated }

type gated struct {
	v   eval.Verdict
	err error
}

func (g gatedEval) Evaluate(ctx context.Context, _ eval.Job) (eval.Verdict, error) {
	select {
	case r := <-g.next:
		return r.v, r.err
	case <-ctx.Done():
		return eval.Verdict{}, ctx.Err()
	}
}

// Off a terminal, bench says something per finished evaluation, and a
// heartbeat while none finishes; an evaluation Ctrl-C cut short is not one.
func TestLineProgress(t *testing.T) {
	clock := kgtest.NewClock(time.Unix(1000, 0))
	var out syncBuffer
	ev := gatedEval{next: make(chan gated)}
	lp := newLineProgress(ev, &out, 3, clock.Now)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { lp.heartbeat(ctx, 40*time.Millisecond) })
	defer wg.Wait()
	defer stop()
	job := func(name string) eval.Job { return eval.Job{Task: eval.Task{Name: name}} }
	has := func(s string) {
		t.Helper()
		kgtest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
			if !strings.Contains(out.String(), s) {
				return fmt.Errorf("no %q in %q", s, out.String())
			}
			return nil
		})
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		lp.Evaluate(context.Background(), job("1_add"))
	}()
	kgtest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if lp.Stats() != nil {
			return errors.New("stats from an evaluator without any")
		}
		lp.mu.Lock()
		defer lp.mu.Unlock()
		if lp.running != 1 {
			return fmt.Errorf("%d running", lp.running)
		}
		return nil
	})
	clock.Advance(100 * time.Second)
	has("bench: 0/3 done at 1m40s, 1 running\n")
	ev.next <- gated{v: eval.Verdict{Status: eval.StatusCorrect}}
	<-done
	has("bench: 1/3 done at 1m40s: 1_add correct (100.0 s)\n")

	go func() { ev.next <- gated{err: errors.New("zygote gone\nTraceback")} }()
	lp.Evaluate(context.Background(), job("2_gelu"))
	has("bench: 2/3 done at 1m40s: 2_gelu error: zygote gone Traceback (0.0 s)\n")

	cut, cancel := context.WithCancel(context.Background())
	cancel()
	lp.Evaluate(cut, job("3_relu"))
	time.Sleep(100 * time.Millisecond) // ticks of the heartbeat with the clock standing still: no line
	if got := strings.Count(out.String(), "\n"); got != 3 || strings.Contains(out.String(), "3_relu") {
		t.Errorf("%d lines:\n%s", got, out.String())
	}
}

// bench off a terminal on the real harness: a progress line per finished
// evaluation, and Ctrl-C after the first gives the partial JSON report of
// what finished, then exit 130.
func TestBenchProgressAndPartialReportOnCancel(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &cancelOn{s: "bench: 1/8 done", cancel: cancel}
	code := run(ctx, []string{"bench", "--json", "--tasks", "../../datasets/ci", "--kernels", "../../datasets/solutions/ci",
		"--seeds", "1", "--concurrency", "1", "--device", "cpu"}, &stdout, stderr)
	if code != exitAborted {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	var rep struct {
		Partial bool `json:"partial"`
		Evals   int  `json:"evals"`
		Rows    []struct {
			Task   string `json:"task"`
			Status string `json:"status"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, stdout.String())
	}
	if !rep.Partial || rep.Evals < 1 || rep.Evals > 2 || len(rep.Rows) != rep.Evals || rep.Rows[0].Task != "1_add_relu" || rep.Rows[0].Status != "correct" {
		t.Errorf("report %+v", rep)
	}
	if !regexp.MustCompile(`(?m)^bench: 1/8 done at \d+s: 1_add_relu correct \(\d+\.\d s\)$`).MatchString(stderr.String()) ||
		!strings.HasSuffix(stderr.String(), "kernelgate: interrupted\n") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// cancelOn is a stderr that cancels the run once s is written to it.
type cancelOn struct {
	syncBuffer
	s      string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.syncBuffer.Write(p)
	if strings.Contains(c.String(), c.s) {
		c.cancel()
	}
	return n, err
}

// In CPU mode bench skips a task whose meta pass is over the threshold, with
// a warning, and evaluates the rest.
func TestBenchSkipsTooLargeInCPUMode(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	tasks, kernels := filepath.Join(root, "tasks"), filepath.Join(root, "kernels")
	for _, d := range []string{tasks, kernels} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(tasks, "1_add_relu.py"):   readFileT(t, "../../datasets/ci/1_add_relu.py"),
		filepath.Join(kernels, "1_add_relu.py"): readFileT(t, "../../datasets/solutions/ci/1_add_relu.py"),
		filepath.Join(tasks, "2_big.py"):        bigTask,
		filepath.Join(kernels, "2_big.py"):      "import torch\n",
	}
	for p, src := range files {
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(context.Background(), []string{"bench", "--tasks", tasks, "--kernels", kernels, "--device", "cpu"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	for _, s := range []string{"bench: skipping 2_big: too large for CPU mode (no GPU): 2048.0 MiB and 0.0 GFLOP per call (meta pass)",
		"bench: 1/1 done at"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
		}
	}
	out := stdout.String()
	if !strings.Contains(out, "1 evaluations in") || !strings.Contains(out, "statuses: correct=1") ||
		!strings.Contains(out, "skipped, too large for CPU mode (--force runs them): 2_big") {
		t.Errorf("stdout:\n%s", out)
	}
}

// Ctrl-C while the zygote starts: still the report, partial and empty, then 130.
func TestBenchInterruptedWhileStarting(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout bytes.Buffer
	var stderr syncBuffer
	code := run(ctx, []string{"bench", "--tasks", "../../datasets/ci", "--kernels", "../../datasets/solutions/ci", "--device", "cpu"}, &stdout, &stderr)
	if code != exitAborted || !strings.HasPrefix(stdout.String(), "PARTIAL REPORT") || !strings.Contains(stdout.String(), "0 evaluations") {
		t.Fatalf("exit %d; stdout %q; stderr %s", code, stdout.String(), stderr.String())
	}
}
