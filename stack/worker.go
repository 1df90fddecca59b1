package stack

import (
	"context"
	"log/slog"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/harness"
	"github.com/kernelgate/kernelgate/worker"
)

// WorkerConfig is `kernelgate worker`: a GPU host joined to a gateway's
// NATS (Bus.Join: the gateway's limits stay as it set them).
type WorkerConfig struct {
	Bus        bus.Options
	Supervisor func(ctx context.Context) (*harness.Supervisor, error)
	ID, Host   string // how it announces itself
	Log        *slog.Logger
	// Started is told, once jobs are pulled, the timing mode and the slots.
	Started func(mode string, slots int)
}

// Worker pulls and evaluates jobs until ctx ends or a component fails; on
// the way out a job in flight goes back to the queue for another worker.
func Worker(ctx context.Context, cfg WorkerConfig) error {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b *bus.Bus
	var sup *harness.Supervisor
	r, err := Start(ctx, log,
		Component{Name: "the bus", Start: func(ctx context.Context) (err error) {
			b, err = bus.Open(ctx, cfg.Bus, log)
			return err
		}, Stop: func(context.Context) error { b.Close(); return nil }},
		Component{Name: "the harness", Start: func(ctx context.Context) (err error) {
			sup, err = cfg.Supervisor(ctx)
			return err
		}, Stop: func(context.Context) error { sup.Close(); return nil }},
		Component{Name: "the worker", Run: func(ctx context.Context) error { return worker.Run(ctx, b, sup, log) }},
		Component{Name: "the announcement", Run: func(ctx context.Context) error {
			return worker.Announce(ctx, b, sup, sup, cfg.ID, cfg.Host, log)
		}},
	)
	if err != nil {
		return err
	}
	if cfg.Started != nil {
		cfg.Started(sup.Mode(), worker.Slots(sup))
	}
	return wait(ctx, r)
}

// wait waits until ctx ends or a component fails, then stops r.
func wait(ctx context.Context, r *Running) error {
	var failed error
	select {
	case <-ctx.Done():
	case failed = <-r.Failed():
	}
	stopErr := r.Stop()
	if failed != nil {
		return failed
	}
	return stopErr
}
