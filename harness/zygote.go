package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// zygoteSpec is what one zygote process needs to start.
type zygoteSpec struct {
	python       string
	pythonPath   string // root holding kgharness/
	mode         string // "gpu" or "cpu_interpreter"
	deviceIndex  int
	dataDir      string
	startTimeout time.Duration
	lineLimit    int
	// memoryBudgetMB is the device memory the zygote's evaluations may reserve
	// together (admission by memory, docs/protocol.md); 0 admits everything at once.
	memoryBudgetMB int
	// passEnv names variables of the parent's environment the zygote gets
	// beyond the allowlist (zygoteenv.go).
	passEnv []string
}

// zygote is one running Python zygote and the jobs it has in flight.
type zygote struct {
	log    *slog.Logger
	spec   zygoteSpec
	cmd    *exec.Cmd
	jobs   *os.File // fd 3 of the zygote: Go → zygote
	recs   *os.File // fd 4 of the zygote: zygote → Go
	stderr *lineLog
	hello  Hello

	helloCh chan helloResult
	done    chan struct{} // closed once the process is gone and pending jobs are failed
	started time.Time

	writeMu sync.Mutex
	mu      sync.Mutex
	pending map[string]*pendingJob
	dead    bool
}

type pendingJob struct {
	pid    atomic.Int64
	result chan eval.Verdict // buffered: exactly one verdict is ever sent
}

type helloResult struct {
	hello Hello
	err   error
}

// errNotSent means the job never reached the zygote, so it is safe to retry
// on another one.
var errNotSent = errors.New("job not sent: zygote is gone")

const writeTimeout = 10 * time.Second

// startZygote starts the process and waits for its hello. runCtx bounds the
// process's life; ctx bounds only the wait for hello.
func startZygote(ctx, runCtx context.Context, spec zygoteSpec, log *slog.Logger) (*zygote, error) {
	jobsR, jobsW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("harness.startZygote: %w", err)
	}
	recsR, recsW, err := os.Pipe()
	if err != nil {
		jobsR.Close()
		jobsW.Close()
		return nil, fmt.Errorf("harness.startZygote: %w", err)
	}
	z := &zygote{
		log: log, spec: spec, jobs: jobsW, recs: recsR,
		stderr:  newLineLog(log.With("stream", "stderr"), spec.lineLimit),
		helloCh: make(chan helloResult, 1),
		done:    make(chan struct{}),
		pending: map[string]*pendingJob{},
	}
	args := []string{"-m", "kgharness.zygote", "--mode", spec.mode, "--device-index", strconv.Itoa(spec.deviceIndex)}
	if spec.memoryBudgetMB > 0 {
		args = append(args, "--memory-budget-mb", strconv.Itoa(spec.memoryBudgetMB))
	}
	cmd := exec.CommandContext(runCtx, spec.python, args...)
	cmd.Env = zygoteEnv(os.Environ(), spec)
	cmd.ExtraFiles = []*os.File{jobsR, recsW} // fd 3, fd 4
	cmd.Stdout = newLineLog(log.With("stream", "stdout"), spec.lineLimit)
	cmd.Stderr = z.stderr
	cmd.SysProcAttr = zygoteProcAttr()
	// A forked child that inherited stdout must not hold Wait forever.
	cmd.WaitDelay = 2 * time.Second
	z.cmd = cmd
	err = cmd.Start()
	jobsR.Close() // the zygote holds its own copies now
	recsW.Close()
	if err != nil {
		jobsW.Close()
		recsR.Close()
		return nil, fmt.Errorf("harness.startZygote: %s: %w; %s", spec.python, err, setupHint)
	}
	z.started = time.Now()
	readerDone := make(chan struct{})
	go z.readLoop(readerDone)
	go z.waitLoop(readerDone)
	if err := z.awaitHello(ctx); err != nil {
		z.kill()
		<-z.done
		return nil, err
	}
	return z, nil
}

func (z *zygote) awaitHello(ctx context.Context) error {
	timer := time.NewTimer(z.spec.startTimeout)
	defer timer.Stop()
	select {
	case r := <-z.helloCh:
		if r.err != nil {
			return fmt.Errorf("harness.startZygote: %w", r.err)
		}
		z.hello = r.hello
		return nil
	case <-z.done:
		return fmt.Errorf("harness.startZygote: zygote exited before hello (%s); %s", z.exitReason(), setupHint)
	case <-timer.C:
		return fmt.Errorf("harness.startZygote: no hello within %s; last output:\n%s", z.spec.startTimeout, z.stderr.Tail(10))
	case <-ctx.Done():
		return fmt.Errorf("harness.startZygote: %w", ctx.Err())
	}
}

// readLoop routes records from fd 4 until it closes.
func (z *zygote) readLoop(done chan<- struct{}) {
	defer close(done)
	br := bufio.NewReaderSize(z.recs, 64<<10)
	first := true
	for {
		line, err := readLine(br, maxRecordBytes)
		if errors.Is(err, errLineTooLong) {
			z.log.Warn("dropped oversized record", "limit", maxRecordBytes)
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
				z.log.Warn("record pipe", "err", err)
			}
			break
		}
		if first {
			first = false
			z.helloCh <- parseHello(line)
			continue
		}
		z.route(line)
	}
	// A zygote that closed its record pipe can no longer answer: end it.
	z.kill()
}

func parseHello(line []byte) helloResult {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Type != TypeHello {
		return helloResult{err: fmt.Errorf("first record is not hello: %.200q", line)}
	}
	if h.V != ProtocolMajor {
		return helloResult{err: fmt.Errorf("zygote speaks protocol major %d, this kernelgate speaks %s: "+
			"rebuild kernelgate and its Python side from the same version", h.V, ProtocolVersion)}
	}
	r, err := DecodeRecord(line)
	if err != nil {
		return helloResult{err: err}
	}
	hello := r.(*Hello)
	if m, _ := ParseMajor(hello.Protocol); m != ProtocolMajor {
		return helloResult{err: fmt.Errorf("zygote speaks protocol %s, this kernelgate speaks %s", hello.Protocol, ProtocolVersion)}
	}
	return helloResult{hello: *hello}
}

func (z *zygote) route(line []byte) {
	r, err := DecodeRecord(line)
	if err != nil {
		z.log.Warn("bad record from zygote", "err", err)
		return
	}
	switch r := r.(type) {
	case *Started:
		z.mu.Lock()
		if p := z.pending[r.ID]; p != nil {
			p.pid.Store(int64(r.PID))
		}
		z.mu.Unlock()
	case *Result:
		if !z.deliver(r.ID, r.Verdict) {
			z.log.Debug("result for a job no longer waited for", "job", r.ID)
		}
	case *ErrorRecord:
		z.log.Warn("zygote rejected a record", "job", r.ID, "message", r.Message)
		v := harnessVerdict(eval.StatusHarnessError, z.spec.mode, "harness protocol error: "+r.Message, "ProtocolError: zygote rejected the job")
		if r.ID != "" {
			z.deliver(r.ID, v)
		}
	default:
		z.log.Warn("unexpected record from zygote", "type", r.recordType())
	}
}

// deliver hands v to the job's waiter, at most once.
func (z *zygote) deliver(id string, v eval.Verdict) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	p := z.pending[id]
	if p == nil {
		return false
	}
	delete(z.pending, id)
	p.result <- v
	return true
}

// waitLoop reaps the process, then fails every job still in flight.
func (z *zygote) waitLoop(readerDone <-chan struct{}) {
	_ = z.cmd.Wait()
	// Records written just before exit are still in the pipe: drain them,
	// but a surviving child holding fd 4 must not keep the reader forever.
	_ = z.recs.SetReadDeadline(time.Now().Add(time.Second))
	<-readerDone
	z.recs.Close()
	z.jobs.Close()
	reason := z.exitReason()
	z.mu.Lock()
	z.dead = true
	pending := z.pending
	z.pending = nil
	z.mu.Unlock()
	for id, p := range pending {
		killGroup(int(p.pid.Load()))
		p.result <- harnessVerdict(eval.StatusHarnessError, z.spec.mode,
			"the evaluator process (zygote) died while this job ran: "+reason, "HarnessError: zygote died")
		z.log.Warn("job failed: zygote died", "job", id)
	}
	close(z.done)
}

func (z *zygote) exitReason() string {
	state := "still running"
	if ps := z.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	if tail := z.stderr.Tail(5); tail != "" {
		return state + "; last output:\n" + tail
	}
	return state
}

func (z *zygote) kill() {
	if z.cmd.Process != nil {
		_ = z.cmd.Process.Kill()
	}
}

// send writes one record to fd 3. The deadline keeps a wedged zygote (not
// reading, pipe full) from blocking the caller forever.
func (z *zygote) send(r Record) error {
	b, err := EncodeRecord(r)
	if err != nil {
		return err
	}
	z.writeMu.Lock()
	defer z.writeMu.Unlock()
	_ = z.jobs.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := z.jobs.Write(b); err != nil {
		return fmt.Errorf("harness.send: %w", err)
	}
	return nil
}

// shutdown asks the zygote to exit and kills it if it has not within grace.
func (z *zygote) shutdown(grace time.Duration) {
	if err := z.send(NewShutdown()); err != nil {
		z.kill()
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-z.done:
		return
	case <-t.C:
		z.log.Warn("zygote ignored shutdown; killing it", "grace", grace)
		z.kill()
	}
	<-z.done
}
