package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Component is one part of a kernelgate process. Start sets it up (a store
// opened, zygotes started, a port bound); Run, when there is one, is its
// work in the background until its context ends (a failure stops the
// whole process); Stop, when there is one, lets it finish gracefully
// before Run's context ends (the sink writes what is logged). Every field
// may be nil.
type Component struct {
	Name  string
	Start func(ctx context.Context) error
	Run   func(ctx context.Context) error
	Stop  func(ctx context.Context) error
}

// StopTimeout bounds each component's Stop.
const StopTimeout = 30 * time.Second

// Running is a started set of components.
type Running struct {
	log     *slog.Logger
	started []*running
	failed  chan error // the first Run that ended on its own
}

type running struct {
	c      Component
	cancel context.CancelFunc
	done   chan error // Run's result; nil without Run
}

// Start starts comps in order. Each Run gets a context of its own, which
// ends only when Stop reaches it: a SIGTERM to ctx stops the components in
// reverse order (Running.Stop), not all at once. When a Start fails, what
// was started is stopped and the error returned.
func Start(ctx context.Context, log *slog.Logger, comps ...Component) (*Running, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Running{log: log, failed: make(chan error, len(comps))}
	for _, c := range comps {
		if c.Start != nil {
			if err := c.Start(ctx); err != nil {
				r.Stop()
				return nil, err
			}
		}
		rc := &running{c: c, cancel: func() {}}
		if c.Run != nil {
			rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			rc.cancel, rc.done = cancel, make(chan error, 1)
			go func() {
				err := c.Run(rctx)
				if rctx.Err() == nil { // ended on its own: the process stops
					if err == nil {
						err = fmt.Errorf("%s stopped", c.Name)
					}
					r.failed <- fmt.Errorf("%s: %w", c.Name, err)
				}
				rc.done <- err
			}()
		}
		r.started = append(r.started, rc)
	}
	return r, nil
}

// Failed yields the error of the first component whose Run ended before
// Stop.
func (r *Running) Failed() <-chan error { return r.failed }

// Stop stops the components in reverse order: each one's Stop, then the
// end of its Run's context, waiting for Run to return. It returns the
// first error a Run or a Stop gave while stopping.
func (r *Running) Stop() error {
	var errs []error
	for i := len(r.started) - 1; i >= 0; i-- {
		rc := r.started[i]
		if rc.c.Stop != nil {
			ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
			if err := rc.c.Stop(ctx); err != nil {
				r.log.Warn("stopping "+rc.c.Name+" failed", "err", err)
				errs = append(errs, fmt.Errorf("%s: %w", rc.c.Name, err))
			}
			cancel()
		}
		rc.cancel()
		if rc.done != nil {
			if err := <-rc.done; err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("%s: %w", rc.c.Name, err))
			}
		}
	}
	r.started = nil
	return errors.Join(errs...)
}
