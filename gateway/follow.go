package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/worker"
)

// follower yields each finished item of one batch exactly once: those
// already stored (load), then each as its notification arrives. It
// subscribes before anything is read, and a worker stores a result before it
// announces it, so no result falls between the two. Notifications are core
// NATS and can be lost (a reconnect); after quiet time without one the
// follower reads the stored results again.
type follower struct {
	bus   *bus.Bus
	log   *slog.Logger
	id    string
	quiet time.Duration // re-read the store after this long without a notification
	sub   *bus.Subscription
	seen  []bool
	left  int
	queue []worker.Result // read or heard, not yet returned
}

// follow subscribes to batch id's notifications. The caller must close it.
func (s *Server) follow(ctx context.Context, id string, total int) (*follower, error) {
	sub, err := s.deps.Bus.Subscribe(ctx, worker.ResultsSubject(id))
	if err != nil {
		return nil, fmt.Errorf("gateway.follow %s: %w", id, err)
	}
	return &follower{
		bus: s.deps.Bus, log: s.log.With("batch", id), id: id, quiet: s.cfg.ResultPoll,
		sub: sub, seen: make([]bool, total), left: total,
	}, nil
}

func (f *follower) close() { f.sub.Unsubscribe() }

// load queues every stored result not yet returned, in index order.
func (f *follower) load(ctx context.Context) error {
	stored, err := f.bus.Results(ctx, f.id)
	if err != nil {
		return fmt.Errorf("gateway.follow %s: %w", f.id, err)
	}
	var rs []worker.Result
	for _, data := range stored {
		r, err := decodeResult(data, len(f.seen))
		if err != nil {
			f.log.Error("bad stored result", "err", err)
			continue
		}
		if !f.seen[r.Index] {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b worker.Result) int { return a.Index - b.Index })
	f.queue = append(f.queue, rs...)
	return nil
}

// next returns the next item not returned before, io.EOF once every item
// has been returned, or ctx's error when ctx ends first.
func (f *follower) next(ctx context.Context) (worker.Result, error) {
	for {
		for len(f.queue) > 0 {
			r := f.queue[0]
			f.queue = f.queue[1:]
			if !f.seen[r.Index] { // a redelivered job, or read and heard
				f.seen[r.Index] = true
				f.left--
				return r, nil
			}
		}
		if f.left == 0 {
			return worker.Result{}, io.EOF
		}
		qctx, cancel := context.WithTimeout(ctx, f.quiet)
		data, err := f.sub.Next(qctx)
		cancel()
		switch {
		case err == nil:
			r, derr := decodeResult(data, len(f.seen))
			if derr != nil {
				f.log.Error("bad result notification", "err", derr)
				continue
			}
			f.queue = append(f.queue, r)
		case ctx.Err() != nil:
			return worker.Result{}, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := f.load(ctx); err != nil {
				return worker.Result{}, err
			}
		default:
			return worker.Result{}, fmt.Errorf("gateway.follow %s: %w", f.id, err)
		}
	}
}
