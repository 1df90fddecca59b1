package harness

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// The test binary doubles as a fake zygote: Config.Python points at it, so
// it is started as `<test binary> -m kgharness.zygote --mode M --device-index N`
// with fd 3/4, exactly like the real one. It answers from the golden records,
// so it speaks the protocol the Python side is held to. FAKEZYGOTE selects the
// behaviour; markers in the candidate code select the per-job outcome.
const (
	envFake     = "FAKEZYGOTE"       // ok | badmajor | nohello | notorch
	envFakeRole = "FAKEZYGOTE_ROLE"  // zygote | child
	unusedPID   = 1<<22 + 12345      // above pid_max: kill(-pid) finds nothing
	markWrong   = "# FAKE:WRONG"     // result: incorrect
	markDie     = "# FAKE:DIE"       // zygote exits after started
	markHang    = "# FAKE:HANG"      // a real child that never answers
	markSlow    = "# FAKE:SLOW"      // answer after 300 ms
	markTaskErr = "# FAKE:TASKERROR" // harness_error with task_error
	// the first evaluation of it in a zygote: harness_error with task_error; later ones as usual
	markTaskErrOnce = "# FAKE:TASKERRORONCE"
	// after 300 ms, a verdict to retry (gpu_oom) whose feedback counts this zygote's
	markOOM = "# FAKE:OOM"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envFakeRole) {
	case "zygote":
		os.Exit(fakeZygote())
	case "child":
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	flag.Parse()
	os.Exit(m.Run())
}

type fakeWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *fakeWriter) write(v any) {
	b, _ := json.Marshal(v)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f.Write(append(b, '\n'))
}

func fakeZygote() int {
	fs := flag.NewFlagSet("fakezygote", flag.ContinueOnError)
	fs.String("m", "", "module")
	mode := fs.String("mode", "", "gpu|cpu_interpreter")
	fs.Int("device-index", 0, "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	behaviour := os.Getenv(envFake)
	switch behaviour {
	case "notorch":
		fmt.Fprintln(os.Stderr, "ModuleNotFoundError: No module named 'torch'")
		return 1
	case "nohello":
		time.Sleep(time.Hour)
		return 0
	}
	fmt.Fprintln(os.Stderr, "fake zygote starting, mode", *mode)
	in, out := os.NewFile(3, "jobs"), &fakeWriter{f: os.NewFile(4, "records")}
	var hello map[string]any
	mustGolden("hello.json", &hello)
	hello["mode"], hello["pid"] = *mode, os.Getpid()
	if behaviour == "badmajor" {
		hello["v"], hello["protocol"] = 2, "2.0"
	}
	out.write(hello)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		r, err := DecodeRecord(sc.Bytes())
		if err != nil {
			out.write(map[string]any{"v": 1, "type": "error", "message": err.Error()})
			continue
		}
		switch r := r.(type) {
		case *Shutdown:
			return 0
		case *Eval:
			go fakeEval(out, r, *mode)
		}
	}
	return 0
}

// taskErrSeen: this fake zygote has answered markTaskErrOnce before.
var taskErrSeen bool

// oomSeen counts the markOOM evaluations this fake zygote has answered.
var oomSeen atomic.Int32

func fakeEval(out *fakeWriter, e *Eval, mode string) {
	code := e.Job.Code
	pid := unusedPID
	if strings.Contains(code, markHang) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), envFakeRole+"=child")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		pid = cmd.Process.Pid
		fmt.Fprintf(os.Stderr, "hanging child pid %d\n", pid)
	}
	out.write(Started{Header: Header{V: 1, Type: TypeStarted}, ID: e.ID, PID: pid})
	switch {
	case strings.Contains(code, markDie):
		os.Exit(3)
	case strings.Contains(code, markHang):
		return
	case strings.Contains(code, markSlow), strings.Contains(code, markOOM):
		time.Sleep(300 * time.Millisecond)
	}
	var res Result
	mustGolden("result.json", &res)
	v := &res.Verdict
	res.ID = e.ID
	v.TaskName = e.Job.Task.Name
	v.TimingMode = mode
	v.Env.Device = "cpu"
	if mode == eval.TimingGPU {
		v.Env.Device = "cuda:0"
	}
	v.Env.GPUName = fmt.Sprintf("fake CVD=%s TI=%s", os.Getenv("CUDA_VISIBLE_DEVICES"), os.Getenv("TRITON_INTERPRET"))
	switch {
	case strings.Contains(code, markOOM):
		v.Status, v.Correct, v.Speedup, v.Retry = eval.StatusHarnessError, false, nil, "gpu_oom"
		v.Feedback = fmt.Sprintf("out of GPU memory, the %d. time in this zygote", oomSeen.Add(1))
	case strings.Contains(code, markWrong):
		v.Status, v.Correct, v.Speedup, v.Feedback = eval.StatusIncorrect, false, nil, "trial 0: max abs error 1.0"
	case e.Job.TaskCheck && strings.Contains(e.Job.Task.Source, markTaskErr):
		v.Status, v.Correct, v.Speedup, v.TaskError, v.ReferenceChecked = eval.StatusHarnessError, false, nil, "SyntaxError in task", false
	case strings.Contains(code, markTaskErrOnce):
		if !taskErrSeen {
			taskErrSeen = true
			v.Status, v.Correct, v.Speedup, v.TaskError, v.ReferenceChecked = eval.StatusHarnessError, false, nil, "the reference raised AcceleratorError: CUDA error: out of memory", false
		}
	case strings.Contains(code, markTaskErr):
		v.Status, v.Correct, v.Speedup, v.TaskError, v.ReferenceChecked = eval.StatusHarnessError, false, nil, "SyntaxError in task", false
	}
	out.write(res)
}

func mustGolden(name string, v any) {
	b, err := os.ReadFile("testdata/protocol/" + name)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
}
