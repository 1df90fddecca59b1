package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/gpu"
)

// slot is where one zygote runs: a GPU (or the CPU) and the zygote currently
// serving it, which runs up to conc evaluations at once. Fields after conc
// are guarded by Supervisor.mu.
type slot struct {
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

// brokenAfter is how many consecutive failed starts make a slot count as
// broken, so that Evaluate fails instead of waiting for it forever.
const brokenAfter = 3

func (sl *slot) readClock() *int {
	if sl.dev == nil || sl.dev.SMClock == nil {
		return nil
	}
	mhz, err := sl.dev.SMClock()
	if err != nil {
		return nil
	}
	return &mhz
}

func (s *Supervisor) startSlot(ctx, runCtx context.Context, sl *slot) (*zygote, error) {
	mode := eval.TimingCPUInterpreter
	if sl.dev != nil {
		mode = eval.TimingGPU
	}
	spec := zygoteSpec{
		python: s.python, pythonPath: s.pyRoot, mode: mode, deviceIndex: sl.index,
		dataDir: s.cfg.DataDir, startTimeout: s.cfg.StartTimeout, lineLimit: s.cfg.LogLineLimit,
		passEnv: s.cfg.PassEnv,
	}
	if sl.dev != nil {
		spec.memoryBudgetMB = memoryBudgetMB(sl.dev.MemoryTotal)
	}
	return startZygote(ctx, runCtx, spec, s.log.With("zygote", sl.label))
}

func (s *Supervisor) setZygote(sl *slot, z *zygote, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.z = z
	if err != nil {
		sl.startFailures++
		sl.lastErr = err
	} else if z != nil {
		sl.startFailures = 0
		sl.hello = z.hello
	}
	s.notifyLocked()
}

// supervise restarts sl's zygote whenever it dies, with exponential backoff
// (reset after a zygote that lived a while), until Close.
func (s *Supervisor) supervise(runCtx context.Context, sl *slot) {
	backoff := s.cfg.RestartBackoff
	for {
		s.mu.Lock()
		z := sl.z
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
			sl.z = nil
			closed := s.closed
			if !closed {
				sl.restarts++
			}
			s.notifyLocked()
			s.mu.Unlock()
			if closed {
				return
			}
			s.log.Warn("zygote died; restarting", "zygote", sl.label, "backoff", backoff)
		}
		select {
		case <-time.After(backoff):
		case <-runCtx.Done():
			return
		}
		backoff = min(2*backoff, s.cfg.MaxRestartBackoff)
		nz, err := s.startSlot(runCtx, runCtx, sl)
		if err != nil {
			s.log.Warn("zygote restart failed", "zygote", sl.label, "err", err)
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed && nz != nil {
			nz.shutdown(5 * time.Second)
			return
		}
		s.setZygote(sl, nz, err)
	}
}

// acquire waits for the least-loaded running zygote with a free slot and for
// the host memory o's evaluation may hold (Config.HostMemoryMB), which it
// lowers to the whole bound when it asks for more. With prefer, and its
// zygote running, it waits for that slot alone: a retry goes back to the
// zygote that reserves more for it (Supervisor.run).
func (s *Supervisor) acquire(ctx context.Context, o *eval.Options, prefer *slot) (*slot, *zygote, error) {
	budget := s.cfg.HostMemoryMB
	if budget > 0 && o.MemoryLimitMB > budget {
		o.MemoryLimitMB = budget
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, ErrClosed
		}
		if !s.started || len(s.slots) == 0 {
			s.mu.Unlock()
			return nil, nil, ErrNotStarted
		}
		var best *slot
		broken := 0
		only := prefer != nil && prefer.z != nil
		for _, sl := range s.slots {
			if sl.z == nil {
				if sl.startFailures >= brokenAfter {
					broken++
				}
				continue
			}
			if only && sl != prefer {
				continue
			}
			if sl.inflight < sl.conc && (best == nil || sl.inflight < best.inflight) {
				best = sl
			}
		}
		if best != nil && budget > 0 && s.memMB > 0 && s.memMB+o.MemoryLimitMB > budget {
			best = nil // the host's memory is spoken for: wait for an evaluation to end
		}
		if best != nil {
			best.inflight++
			s.memMB += o.MemoryLimitMB
			z := best.z
			s.mu.Unlock()
			return best, z, nil
		}
		if broken == len(s.slots) {
			err := s.slots[0].lastErr
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

func (s *Supervisor) release(sl *slot, memMB int) {
	s.mu.Lock()
	s.memMB -= memMB
	sl.inflight--
	sl.jobsDone++
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
