package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/harness/gpu"
)

// worker is one zygote slot: a GPU (or the CPU) and the zygote currently
// serving it. Fields after conc are guarded by Supervisor.mu.
type worker struct {
	label string
	index int
	dev   *gpu.Device // nil in CPU mode
	conc  int

	z             *zygote
	hello         Hello
	inflight      int
	jobsDone      int64
	restarts      int
	startFailures int
	lastErr       error
}

// brokenAfter is how many consecutive failed starts make a worker count as
// broken, so that Evaluate fails instead of waiting for it forever.
const brokenAfter = 3

func (w *worker) readClock() *int {
	if w.dev == nil || w.dev.SMClock == nil {
		return nil
	}
	mhz, err := w.dev.SMClock()
	if err != nil {
		return nil
	}
	return &mhz
}

func (s *Supervisor) startWorker(ctx, runCtx context.Context, w *worker) (*zygote, error) {
	mode := TimingCPUInterpreter
	if w.dev != nil {
		mode = TimingGPU
	}
	spec := zygoteSpec{
		python: s.python, pythonPath: s.pyRoot, mode: mode, deviceIndex: w.index,
		dataDir: s.cfg.DataDir, startTimeout: s.cfg.StartTimeout, lineLimit: s.cfg.LogLineLimit,
		passEnv: s.cfg.PassEnv,
	}
	if w.dev != nil {
		spec.memoryBudgetMB = memoryBudgetMB(w.dev.MemoryTotal)
	}
	return startZygote(ctx, runCtx, spec, s.log.With("zygote", w.label))
}

func (s *Supervisor) setZygote(w *worker, z *zygote, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.z = z
	if err != nil {
		w.startFailures++
		w.lastErr = err
	} else if z != nil {
		w.startFailures = 0
		w.hello = z.hello
	}
	s.notifyLocked()
}

// supervise restarts w's zygote whenever it dies, with exponential backoff
// (reset after a zygote that lived a while), until Close.
func (s *Supervisor) supervise(runCtx context.Context, w *worker) {
	backoff := s.cfg.RestartBackoff
	for {
		s.mu.Lock()
		z := w.z
		s.mu.Unlock()
		if z != nil {
			select {
			case <-z.done:
			case <-runCtx.Done():
				return
			}
			if time.Since(z.started) > time.Minute {
				backoff = s.cfg.RestartBackoff
			}
			s.mu.Lock()
			w.z = nil
			closed := s.closed
			if !closed {
				w.restarts++
			}
			s.notifyLocked()
			s.mu.Unlock()
			if closed {
				return
			}
			s.log.Warn("zygote died; restarting", "zygote", w.label, "backoff", backoff)
		}
		select {
		case <-time.After(backoff):
		case <-runCtx.Done():
			return
		}
		backoff = min(2*backoff, s.cfg.MaxRestartBackoff)
		nz, err := s.startWorker(runCtx, runCtx, w)
		if err != nil {
			s.log.Warn("zygote restart failed", "zygote", w.label, "err", err)
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed && nz != nil {
			nz.shutdown(5 * time.Second)
			return
		}
		s.setZygote(w, nz, err)
	}
}

// acquire waits for the least-loaded running zygote with a free slot.
func (s *Supervisor) acquire(ctx context.Context) (*worker, *zygote, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, ErrClosed
		}
		if !s.started || len(s.workers) == 0 {
			s.mu.Unlock()
			return nil, nil, ErrNotStarted
		}
		var best *worker
		broken := 0
		for _, w := range s.workers {
			if w.z == nil {
				if w.startFailures >= brokenAfter {
					broken++
				}
				continue
			}
			if w.inflight < w.conc && (best == nil || w.inflight < best.inflight) {
				best = w
			}
		}
		if best != nil {
			best.inflight++
			z := best.z
			s.mu.Unlock()
			return best, z, nil
		}
		if broken == len(s.workers) {
			err := s.workers[0].lastErr
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("no zygote is running: %w", err)
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func (s *Supervisor) release(w *worker) {
	s.mu.Lock()
	w.inflight--
	w.jobsDone++
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Supervisor) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// memoryBudgetMB is what a GPU's evaluations may reserve together: its memory less
// 8% and 1 GiB for the driver, fragmentation and whatever else runs there.
func memoryBudgetMB(totalBytes uint64) int {
	mb := int(totalBytes >> 20)
	return max(mb*92/100-1024, 0)
}
