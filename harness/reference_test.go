package harness

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

func TestReferencesOneCheckPerTask(t *testing.T) {
	r := newReferences()
	release := make(chan struct{})
	var mu sync.Mutex
	calls := 0
	check := func(context.Context) (eval.Verdict, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		<-release
		return eval.Verdict{Status: eval.StatusHarnessError, TaskError: "t.py: forward raised"}, nil
	}
	var wg sync.WaitGroup
	got := make([]*eval.Verdict, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = r.ensure(context.Background(), "h", check) })
	}
	for r.checkCount() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if calls != 1 {
		t.Fatalf("%d checks for one task, want 1", calls)
	}
	for i, v := range got {
		if v == nil || v.TaskError != "t.py: forward raised" {
			t.Fatalf("waiter %d got %+v, want the check's failure", i, v)
		}
	}
	if broken, ok := r.lookup("h"); !ok || broken == nil {
		t.Fatal("the failure was not remembered")
	}
}

func TestReferencesUndecidedAndExpired(t *testing.T) {
	r := newReferences()
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	// A check that could not run (the zygote died) decides nothing.
	broken, decided := r.ensure(context.Background(), "h", func(context.Context) (eval.Verdict, error) {
		return eval.Verdict{Status: eval.StatusHarnessError, Feedback: "zygote died"}, nil
	})
	if broken != nil || decided {
		t.Fatalf("undecided check gave broken=%v decided=%v", broken, decided)
	}
	if _, ok := r.lookup("h"); ok {
		t.Fatal("an undecided check was remembered")
	}
	r.record("h", &eval.Verdict{TaskError: "boom"})
	now = now.Add(refBrokenFor + time.Second)
	if _, ok := r.lookup("h"); ok {
		t.Fatal("a failure older than refBrokenFor still answers")
	}
	r.record("good", nil)
	now = now.Add(24 * time.Hour)
	if broken, ok := r.lookup("good"); !ok || broken != nil {
		t.Fatal("a working reference was forgotten")
	}
}

func TestBlames(t *testing.T) {
	for _, tt := range []struct {
		v    eval.Verdict
		want bool
	}{
		{eval.Verdict{Status: eval.StatusCompileError}, true},
		{eval.Verdict{Status: eval.StatusInvalidSubmission}, true},
		{eval.Verdict{Status: eval.StatusRewardHack}, true},
		{eval.Verdict{Status: eval.StatusCompileError, ReferenceChecked: true}, false},
		{eval.Verdict{Status: eval.StatusHarnessError}, false},
		{eval.Verdict{Status: eval.StatusCorrect}, false},
		{eval.Verdict{Status: eval.StatusRuntimeError, TaskError: "x"}, false},
	} {
		if got := blames(tt.v); got != tt.want {
			t.Errorf("blames(%s, checked %v, task_error %q) = %v", tt.v.Status, tt.v.ReferenceChecked, tt.v.TaskError, got)
		}
	}
}

// The real zygote (CPU): a reference that fails at run time decides every
// evaluation of its task, whatever the candidate sent, with one task check.
func TestIntegrationBrokenReferenceDecidesEveryItem(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real Python zygote")
	}
	py := realPython(t)
	s := New(Config{Python: py, Device: "cpu", Concurrency: 2, CacheDir: t.TempDir()},
		slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		if os.Getenv("KERNELGATE_REQUIRE_PYTHON") != "1" {
			t.Skipf("python %s cannot run the zygote: %v", py, err)
		}
		t.Fatal(err)
	}
	defer s.Close()
	opts := eval.DefaultOptions()
	opts.Seeds, opts.TimeoutS = 2, 120
	honest := fmt.Sprintf(addKernelTemplate, "")
	candidates := []struct{ name, code string }{
		{"prose", "Sorry, I cannot write this kernel."},
		{"empty", ""},
		{"syntax error", strings.Replace(honest, "def forward(self, a, b):", "def forward(self, a, b)", 1)},
		{"fails to load", "import torch\nraise ImportError('no such module')\nclass ModelNew(torch.nn.Module):\n    pass\n"},
		{"honest", honest},
	}
	refs := []struct{ name, old, new, want string }{
		{"forward", "return a + b", "raise ValueError('forward is broken')", "forward is broken"},
		{"get_inputs", "return [torch.rand(64, 32), torch.rand(64, 32)]", "raise RuntimeError('no inputs today')", "no inputs today"},
		{"get_init_inputs", "def get_init_inputs():\n    return []", "def get_init_inputs():\n    raise KeyError('init')", "KeyError"},
	}
	for _, ref := range refs {
		source := strings.Replace(addTask, ref.old, ref.new, 1)
		if source == addTask {
			t.Fatalf("%s: the replacement did not apply", ref.name)
		}
		task := eval.Task{Name: "broken_" + ref.name, Path: "/inline/broken.py", Source: source}
		before := s.refs.checkCount()
		for _, c := range candidates {
			t.Run(ref.name+"/"+c.name, func(t *testing.T) {
				v, err := s.Evaluate(ctx, eval.Job{Task: task, Code: c.code, Options: opts})
				if err != nil {
					t.Fatal(err)
				}
				if v.Status != eval.StatusHarnessError || !strings.Contains(v.TaskError, ref.want) {
					t.Fatalf("status %q task_error %q, want harness_error naming %q; feedback: %s",
						v.Status, v.TaskError, ref.want, v.Feedback)
				}
				if v.TaskHash != eval.HashSource(source) || v.CodeHash != eval.HashSource(c.code) {
					t.Errorf("hashes %q %q", v.TaskHash, v.CodeHash)
				}
			})
		}
		if n := s.refs.checkCount() - before; n > 1 {
			t.Errorf("%s: %d task checks for %d candidates, want at most 1", ref.name, n, len(candidates))
		}
	}
	// A working reference: the candidate's failures stay its own, and empty
	// code is answered without an evaluation once the reference is known.
	task := eval.Task{Name: "1_add", Path: "/inline/1_add.py", Source: addTask}
	for _, c := range candidates[:4] {
		t.Run("working/"+c.name, func(t *testing.T) {
			v, err := s.Evaluate(ctx, eval.Job{Task: task, Code: c.code, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			if v.Status == eval.StatusHarnessError || v.TaskError != "" || !v.ReferenceChecked {
				t.Fatalf("status %q task_error %q checked %v; feedback: %s", v.Status, v.TaskError, v.ReferenceChecked, v.Feedback)
			}
		})
	}
}

// Refreshing a known task keeps every other one: only a new task evicts.
func TestReferencesRefreshEvictsNothing(t *testing.T) {
	r := newReferences()
	tick := time.Unix(0, 0)
	r.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	for i := range refKnown {
		r.record(fmt.Sprint(i), nil)
	}
	r.record("5", nil) // not the oldest: task 0 is
	for i := range refKnown {
		if _, ok := r.lookup(fmt.Sprint(i)); !ok {
			t.Fatalf("task %d forgotten when task 5 was refreshed", i)
		}
	}
	r.record("new", nil)
	if len(r.known) != refKnown {
		t.Fatalf("%d known, want %d", len(r.known), refKnown)
	}
}
