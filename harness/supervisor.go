package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// ErrClosed is returned by Evaluate after Close; ErrNotStarted before Start.
var (
	ErrClosed     = errors.New("harness: supervisor closed")
	ErrNotStarted = errors.New("harness: supervisor not started")
)

// Supervisor runs one zygote per GPU (or one CPU zygote), restarts them when
// they die, and spreads evaluations over them.
type Supervisor struct {
	cfg      Config
	log      *slog.Logger
	discover func() (gpu.Info, error) // replaced in tests

	info   gpu.Info
	mode   string
	refs   *references // what is known of task references (reference.go)
	python string
	pyRoot string
	nextID atomic.Uint64
	wg     sync.WaitGroup
	cancel context.CancelFunc // ends the zygotes' lives, after Close's shutdown

	mu      sync.Mutex
	memMB   int // memory_limit_mb of the evaluations running, summed (Config.HostMemoryMB)
	slots   []*slot
	changed chan struct{} // closed and replaced whenever a slot's state changes
	started bool
	closed  bool
}

// New returns a Supervisor; Start launches its zygotes.
func New(cfg Config, log *slog.Logger) *Supervisor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{
		cfg:      cfg.withDefaults(),
		log:      log.With("component", "harness"),
		discover: gpu.Discover,
		changed:  make(chan struct{}),
		refs:     newReferences(),
	}
}

// Start resolves the interpreter, extracts the Python package, discovers
// GPUs and starts every zygote. It fails only when no zygote could start;
// ctx bounds the start, not the zygotes' lives (Close ends those).
func (s *Supervisor) Start(ctx context.Context) error {
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("harness.Start: already started or closed")
	}
	s.started = true
	s.mu.Unlock()
	var err error
	if s.python, err = ResolvePython(s.cfg.Python); err != nil {
		return err
	}
	if s.pyRoot, err = ExtractPy(s.cfg.CacheDir); err != nil {
		return err
	}
	if err := s.planSlots(); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	errs := make([]error, len(s.slots))
	var wg sync.WaitGroup
	for i, sl := range s.slots {
		wg.Go(func() {
			z, err := s.startSlot(ctx, runCtx, sl)
			s.setZygote(sl, z, err)
			errs[i] = err
		})
	}
	wg.Wait()
	up := 0
	for i, sl := range s.slots {
		if errs[i] == nil {
			up++
		} else {
			s.log.Warn("zygote failed to start", "zygote", sl.label, "err", errs[i])
		}
	}
	if up == 0 {
		s.Close()
		return fmt.Errorf("harness.Start: no zygote started: %w", errors.Join(errs...))
	}
	for _, sl := range s.slots {
		s.wg.Go(func() { s.supervise(runCtx, sl) })
	}
	return nil
}

// planSlots decides the mode and one slot per zygote from cfg.Device.
func (s *Supervisor) planSlots() error {
	if s.cfg.Device != "cpu" {
		info, err := s.discover()
		if err != nil {
			return fmt.Errorf("harness.Start: %w", err)
		}
		s.info = info
	}
	devs := s.info.Devices
	if n, err := strconv.Atoi(s.cfg.Device); err == nil {
		devs = nil
		for _, d := range s.info.Devices {
			if d.Index == n {
				devs = append(devs, d)
			}
		}
		if len(devs) == 0 {
			return fmt.Errorf("harness.Start: GPU %d not found (%d visible; %s)", n, len(s.info.Devices), s.info.Reason)
		}
	}
	if len(devs) == 0 {
		s.mode = eval.TimingCPUInterpreter
		conc := zygoteConcurrency(s.cfg.Concurrency, 0)
		s.slots = []*slot{{label: "cpu", conc: conc}}
		s.log.Info("CPU mode (Triton interpreter)", "reason", s.info.Reason, "concurrency", conc)
		return nil
	}
	s.mode = eval.TimingGPU
	conc := zygoteConcurrency(s.cfg.Concurrency, len(devs))
	for _, d := range devs {
		s.slots = append(s.slots, &slot{label: "gpu" + strconv.Itoa(d.Index), index: d.Index, dev: &d, conc: conc})
	}
	return nil
}

// Evaluate runs job on the least-loaded zygote and returns its verdict.
// The outcome of the evaluation is always a status in the verdict; an error
// means no evaluation could be attempted (bad options, ctx done, closed, no
// zygote). A zero Options means DefaultOptions. A failure is the
// candidate's only once its task's reference has been seen to work
// (reference.go). The verdict's hashes are the ones job carries, made
// here only for a job that comes without them.
func (s *Supervisor) Evaluate(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	if job.Options == (eval.Options{}) {
		job.Options = eval.DefaultOptions()
	}
	if err := job.Options.Validate(); err != nil {
		return eval.Verdict{}, fmt.Errorf("harness.Evaluate: %w", err)
	}
	job.Hash()
	h := job.TaskHash
	if !job.TaskCheck {
		if broken, ok := s.refs.lookup(h); ok && broken != nil {
			return s.made(taskFailed(broken, s.mode), job), nil
		}
		if blankCode(job.Code) {
			// Nothing to run of the candidate: only the reference is in question.
			broken, decided := s.refs.ensure(ctx, h, s.checker(job))
			switch {
			case broken != nil:
				return s.made(taskFailed(broken, s.mode), job), nil
			case decided:
				return s.made(emptySubmission(s.mode), job), nil
			}
		}
	}
	v, err := s.run(ctx, job)
	if err != nil {
		return v, err
	}
	s.refs.learn(h, job, v)
	if job.TaskCheck || (v.TaskError == "" && !blames(v)) {
		return v, nil
	}
	// A task error of one evaluation is not yet the task's: the reference may
	// have met a GPU that other work had filled. Only a check decides.
	broken, decided := s.refs.ensure(ctx, h, s.checker(job))
	switch {
	case broken != nil:
		out := taskFailed(broken, s.mode)
		out.Env, out.StageMS = v.Env, v.StageMS
		return s.made(out, job), nil
	case v.TaskError == "":
		v.ReferenceChecked = decided
	case decided:
		// The reference works: what failed was the moment, so the submission
		// is judged again, once; a second task error stands (valid false).
		if v, err = s.run(ctx, job); err != nil {
			return v, err
		}
		s.refs.learn(h, job, v)
	}
	return v, nil
}

// checker runs the task check that vouches for job's reference.
func (s *Supervisor) checker(job eval.Job) func(context.Context) (eval.Verdict, error) {
	return func(ctx context.Context) (eval.Verdict, error) {
		return s.run(ctx, refCheckJob(job))
	}
}

// made completes a verdict the supervisor made itself, as fill does a
// zygote's.
func (s *Supervisor) made(v eval.Verdict, job eval.Job) eval.Verdict {
	v.Normalize()
	v.TaskHash, v.CodeHash = job.TaskHash, job.CodeHash
	if v.TaskName == "" {
		v.TaskName = job.Task.Name
	}
	return v
}

// run is one evaluation on the least-loaded zygote, retried while its
// verdict asks to be (Verdict.Retry).
func (s *Supervisor) run(ctx context.Context, job eval.Job) (eval.Verdict, error) {
	id := "job-" + strconv.FormatUint(s.nextID.Add(1), 10)
	retries := 0
	var prefer *slot
	for attempt := 1; ; attempt++ {
		sl, z, err := s.acquire(ctx, &job.Options, prefer)
		if err != nil {
			return eval.Verdict{}, fmt.Errorf("harness.Evaluate: %w", err)
		}
		before := sl.readClock()
		v, err := z.eval(ctx, id, job, s.backstop(job.Options, sl.conc))
		after := sl.readClock()
		s.release(sl, job.Options.MemoryLimitMB)
		if errors.Is(err, errNotSent) && attempt < 3 {
			continue // the zygote died before it got the job: try another
		}
		if err != nil {
			return eval.Verdict{}, fmt.Errorf("harness.Evaluate: %w", err)
		}
		if v.Retry != "" && retries < maxRetries {
			// Out of device memory because of other work on the GPU: not this
			// evaluation's outcome. The zygote reserves more for this evaluation's
			// retry, the whole GPU after two: the retry goes back to it, so that the
			// last one runs alone, where an out-of-memory error is the candidate's own.
			retries++
			prefer = sl
			s.log.Info("retrying an evaluation", "job", id, "reason", v.Retry, "retry", retries)
			if err := sleepCtx(ctx, time.Duration(retries)*250*time.Millisecond); err != nil {
				return eval.Verdict{}, fmt.Errorf("harness.Evaluate: %w", err)
			}
			continue
		}
		s.fill(&v, sl, z, job, before, after)
		if retries > 0 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("retried %d time(s): out of GPU memory while other work held it", retries))
		}
		return v, nil
	}
}

// maxRetries bounds how often one evaluation is run again for a reason that is
// not its own (Verdict.Retry); the last verdict then stands, Retry set.
const maxRetries = 2

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backstop is how long to wait for a result before killing the evaluation: its
// timeout and the grace, and in GPU mode the worst case of what its timeout does
// not count: waiting for device memory (admission) and stopped while the other
// evaluations are timed, each of which the zygote bounds by its own timeout. It
// catches a zygote that stopped answering, not slow evaluations.
func (s *Supervisor) backstop(o eval.Options, conc int) time.Duration {
	d := time.Duration(o.TimeoutS)*time.Second + s.cfg.KillGrace
	if s.mode == eval.TimingGPU {
		d *= time.Duration(max(conc, 1))
	}
	return d
}

// fill sets what Go owns in the verdict: the hashes job carries, NVML
// facts, and what a Go-made verdict lacks.
func (s *Supervisor) fill(v *eval.Verdict, sl *slot, z *zygote, job eval.Job, before, after *int) {
	v.Normalize()
	v.TaskHash, v.CodeHash = job.TaskHash, job.CodeHash
	if v.TaskName == "" {
		v.TaskName = job.Task.Name
	}
	if job.TaskCheck {
		nameTaskFailure(v)
	}
	h := z.hello
	e := &v.Env
	setIfEmpty(&e.Device, h.Device)
	setIfEmpty(&e.Python, h.Python)
	setIfEmpty(&e.Torch, h.Torch)
	setIfEmpty(&e.Triton, h.Triton)
	setIfEmpty(&e.HarnessVersion, h.HarnessVersion)
	setIfEmpty(&e.Sandbox, h.Sandbox.Level)
	setIfEmpty(&e.SandboxDetail, h.Sandbox.Detail)
	if sl.dev != nil {
		setIfEmpty(&e.GPUName, sl.dev.Name)
		e.GPUUUID = sl.dev.UUID
		e.Driver = s.info.Driver
		e.SMClockMHzBefore, e.SMClockMHzAfter = before, after
	}
}

func setIfEmpty(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// Close shuts every zygote down (their in-flight jobs get harness_error
// verdicts) and waits for the supervision goroutines. Safe to call twice.
func (s *Supervisor) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	var zs []*zygote
	for _, sl := range s.slots {
		if sl.z != nil {
			zs = append(zs, sl.z)
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, z := range zs {
		wg.Go(func() { z.shutdown(5 * time.Second) })
	}
	wg.Wait()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	s.info.Close()
}

// Mode is "gpu" or "cpu_interpreter" once started.
func (s *Supervisor) Mode() string { return s.mode }

// GPUs is what discovery found (empty with a reason in CPU mode).
func (s *Supervisor) GPUs() gpu.Info { return s.info }

// zygoteConcurrency is each zygote's concurrency on gpus GPUs (0: CPU mode)
// when Config.Concurrency is conc.
func zygoteConcurrency(conc, gpus int) int {
	switch {
	case conc > 0:
		return conc
	case gpus == 0:
		return runtime.NumCPU()
	default:
		// A child spends most of its life compiling on one CPU core (Triton: ~2 s on
		// an H200 host) while timing is serialised per GPU by the zygote's lock, so
		// the GPU's share of the host's cores is what keeps it busy.
		return min(max(runtime.NumCPU()/gpus, 2), 16)
	}
}

// Slots is how many evaluations a supervisor with Config.Concurrency conc
// runs at once on gpus GPUs (0: CPU mode), before it has started.
func Slots(conc, gpus int) int {
	return zygoteConcurrency(conc, gpus) * max(gpus, 1)
}
