package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// startFake starts a Supervisor whose zygotes are this test binary acting
// as a fake zygote (see fakezygote_test.go).
func startFake(t *testing.T, behaviour string, cfg Config, info *gpu.Info) (*Supervisor, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envFakeRole, "zygote")
	t.Setenv(envFake, behaviour)
	cfg.Python = exe
	cfg.PassEnv = append(cfg.PassEnv, envFakeRole, envFake) // beyond the allowlist, by name
	cfg.CacheDir = t.TempDir()
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	cfg.RestartBackoff = 10 * time.Millisecond
	s := New(cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	s.discover = func() (gpu.Info, error) {
		if info == nil {
			return gpu.Info{Devices: []gpu.Device{}, Reason: "test: no GPU"}, nil
		}
		return *info, nil
	}
	err = s.Start(context.Background())
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testJob(code string) eval.Job {
	return eval.Job{Task: eval.Task{Name: "1_add", Path: "/tasks/1_add.py", Source: "import torch\n"}, Code: code}
}

// jobsDone is how many jobs the supervisor's zygotes have answered.
func jobsDone(s *Supervisor) (n int64) {
	for _, st := range s.Stats() {
		n += st.JobsDone
	}
	return n
}

// checkFor polls cond until it holds or d passes (no bare sleeps in tests).
func checkFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestEvaluateStatuses(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, code string
		want       eval.Status
		taskError  bool
	}{
		{"correct", "import triton\n", eval.StatusCorrect, false},
		{"incorrect", "import triton\n" + markWrong, eval.StatusIncorrect, false},
		{"task error", markTaskErr, eval.StatusHarnessError, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob(tt.code)
			v, err := s.Evaluate(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if v.Status != tt.want || (v.TaskError != "") != tt.taskError {
				t.Fatalf("status %q task_error %q, want %q", v.Status, v.TaskError, tt.want)
			}
			if v.CodeHash != eval.HashSource(job.Code) || v.TaskHash != eval.HashSource(job.Task.Source) {
				t.Errorf("hashes not filled: %q %q", v.CodeHash, v.TaskHash)
			}
			if v.Env.GPUName != "fake CVD= TI=1" {
				t.Errorf("CPU-mode env reached the zygote wrong: %q", v.Env.GPUName)
			}
			if v.Env.GPUUUID != "" || v.Env.SMClockMHzBefore != nil {
				t.Errorf("GPU fields set in CPU mode: %+v", v.Env)
			}
		})
	}
	// The task error comes after the first case has shown the reference to
	// work: no check, the submission is judged once more.
	if got := jobsDone(s); got != int64(len(tests)+1) {
		t.Errorf("jobs done %d, want %d", got, len(tests)+1)
	}
	if h, ok := s.Hello(); !ok || h.Mode != eval.TimingCPUInterpreter {
		t.Errorf("hello %+v %v", h, ok)
	}
}

// A reference that fails once, as one that met a GPU other work had filled
// does, is not a broken task: the check passes, the submission is judged
// again and gets its own verdict, and the task is not held as broken.
func TestEvaluateTaskErrorOfTheMoment(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Evaluate(context.Background(), testJob("import triton\n"+markTaskErrOnce))
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != eval.StatusCorrect || v.TaskError != "" {
		t.Fatalf("status %q task_error %q, want correct: judged again after the check", v.Status, v.TaskError)
	}
	if got := jobsDone(s); got != 3 {
		t.Errorf("jobs done %d, want 3 (evaluation, check, evaluation)", got)
	}
	if broken, ok := s.refs.lookup(eval.HashSource(testJob("").Task.Source)); ok && broken != nil {
		t.Errorf("the task is held as broken: %q", broken.TaskError)
	}
}

// A job that carries its hashes (made where it was made: dispatch.Submit)
// gets them in its verdict, from a zygote (fill) or made by the supervisor
// (made): they are not made again from the sources.
func TestEvaluateKeepsTheJobsHashes(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, code string
		broken     bool // the task's reference fails its check (the fake's marker in the task)
		failed     bool // the verdict is the task's failure
	}{
		{"from the zygote", "import triton\n", false, false},
		{"the task's failure", markTaskErr, true, true},
		{"made without a run: the task is known to fail", "import triton\n", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := testJob(tt.code)
			job.TaskHash, job.CodeHash = "sha256:carried-task", "sha256:carried-code "+tt.name
			if tt.broken {
				job.Task.Source += markTaskErr + "\n"
				job.TaskHash = "sha256:carried-broken-task"
			}
			v, err := s.Evaluate(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			if (v.TaskError != "") != tt.failed {
				t.Fatalf("task_error %q: not the path the case names", v.TaskError)
			}
			if v.TaskHash != job.TaskHash || v.CodeHash != job.CodeHash {
				t.Errorf("verdict hashes %q %q, want the job's %q %q", v.TaskHash, v.CodeHash, job.TaskHash, job.CodeHash)
			}
		})
	}
}

func TestZygoteDeathFailsJobAndRestarts(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Evaluate(context.Background(), testJob(markDie))
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != eval.StatusHarnessError || !strings.Contains(v.Feedback, "zygote") {
		t.Fatalf("got %q %q, want harness_error about the zygote", v.Status, v.Feedback)
	}
	checkFor(t, 10*time.Second, "restart", func() bool {
		st := s.Stats()[0]
		return st.Up && st.Restarts == 1
	})
	v, err = s.Evaluate(context.Background(), testJob("ok"))
	if err != nil || v.Status != eval.StatusCorrect {
		t.Fatalf("after restart: %v %v", v.Status, err)
	}
}

func TestBackstopKillsHungChild(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu", KillGrace: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := testJob(markHang)
	job.Options = eval.DefaultOptions()
	job.Options.TimeoutS = 1
	v, err := s.Evaluate(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != eval.StatusTimeout {
		t.Fatalf("status %q, want timeout", v.Status)
	}
	pid := hungChildPID(t, s)
	checkFor(t, 5*time.Second, "hung child killed", func() bool {
		return syscall.Kill(pid, 0) != nil || isZombie(pid)
	})
}

// hungChildPID finds the pid the fake zygote logged for its hanging child.
func hungChildPID(t *testing.T, s *Supervisor) int {
	t.Helper()
	s.mu.Lock()
	z := s.slots[0].z
	s.mu.Unlock()
	var pid int
	for _, line := range strings.Split(z.stderr.Tail(lineLogTail), "\n") {
		if _, err := fmt.Sscanf(line, "hanging child pid %d", &pid); err == nil {
			return pid
		}
	}
	t.Fatal("no hanging child logged")
	return 0
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

func TestEvaluateContextCancel(t *testing.T) {
	s, err := startFake(t, "ok", Config{Device: "cpu"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = s.Evaluate(ctx, testJob(markHang))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	s.Close()
	if _, err := s.Evaluate(context.Background(), testJob("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		behaviour string
		want      []string
	}{
		{"badmajor", []string{"protocol major 2", ProtocolVersion}},
		{"notorch", []string{"No module named 'torch'", "make setup"}},
		{"nohello", []string{"no hello within"}},
	}
	for _, tt := range tests {
		t.Run(tt.behaviour, func(t *testing.T) {
			_, err := startFake(t, tt.behaviour, Config{Device: "cpu", StartTimeout: 500 * time.Millisecond}, nil)
			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestGPUModeFillsNVMLAndSpreadsLoad(t *testing.T) {
	clock := func(mhz int) func() (int, error) { return func() (int, error) { return mhz, nil } }
	info := gpu.Info{Driver: "580.1", Devices: []gpu.Device{
		{Index: 0, Name: "H200", UUID: "GPU-aaa", SMClock: clock(1980)},
		{Index: 3, Name: "H200", UUID: "GPU-bbb", SMClock: clock(1700)},
	}}
	s, err := startFake(t, "ok", Config{Concurrency: 2, HostMemoryMB: -1}, &info) // default options ask 32 GiB each
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode() != eval.TimingGPU || len(s.Stats()) != 2 {
		t.Fatalf("mode %q, %d zygotes", s.Mode(), len(s.Stats()))
	}
	results := make(chan eval.Verdict, 4)
	for range 4 {
		go func() {
			v, err := s.Evaluate(context.Background(), testJob(markSlow))
			if err != nil {
				t.Error(err)
			}
			results <- v
		}()
	}
	uuids := map[string]bool{}
	for range 4 {
		v := <-results
		uuids[v.Env.GPUUUID] = true
		if v.Env.Driver != "580.1" || v.Env.SMClockMHzBefore == nil || v.Env.SMClockMHzAfter == nil {
			t.Errorf("NVML fields missing: %+v", v.Env)
		}
		want := map[string]string{"GPU-aaa": "fake CVD=0 TI=", "GPU-bbb": "fake CVD=3 TI="}[v.Env.GPUUUID]
		if v.Env.GPUName != want {
			t.Errorf("zygote env %q, want %q", v.Env.GPUName, want)
		}
	}
	if len(uuids) != 2 {
		t.Errorf("4 slow jobs with 2 slots per GPU used GPUs %v, want both", uuids)
	}
}

// An evaluation retried for a full GPU goes back to the zygote that reserves
// more for its retry (the last one runs alone there), not to the
// least-loaded one.
func TestRetryGoesBackToItsZygote(t *testing.T) {
	info := gpu.Info{Driver: "580.1", Devices: []gpu.Device{
		{Index: 0, Name: "H200", UUID: "GPU-aaa"}, {Index: 3, Name: "H200", UUID: "GPU-bbb"},
	}}
	s, err := startFake(t, "ok", Config{Concurrency: 2, HostMemoryMB: -1}, &info)
	if err != nil {
		t.Fatal(err)
	}
	// A hung evaluation holds the first GPU, so the retried one starts on the
	// second; the hung one then leaves, and least-loaded would pick the first.
	hold, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	go func() { _, _ = s.Evaluate(hold, testJob(markHang)); close(held) }()
	checkFor(t, 10*time.Second, "the hung evaluation to start", func() bool { return s.Stats()[0].InFlight == 1 })
	got := make(chan eval.Verdict, 1)
	go func() {
		v, err := s.Evaluate(context.Background(), testJob(markOOM))
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	checkFor(t, 10*time.Second, "the retried evaluation to start", func() bool { return s.Stats()[1].InFlight == 1 })
	cancel()
	<-held
	v := <-got
	if v.Retry != "gpu_oom" || v.Env.GPUUUID != "GPU-bbb" || !strings.Contains(v.Feedback, "the 3. time in this zygote") {
		t.Fatalf("three tries of one evaluation: retry %q on %s, %q", v.Retry, v.Env.GPUUUID, v.Feedback)
	}
}
