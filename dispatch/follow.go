package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// Follower yields each finished item of one batch exactly once: those
// already stored (load), then each as its notification arrives. It
// subscribes before anything is read, and a worker stores a result before it
// announces it, so no result falls between the two. Notifications are core
// NATS and can be lost (a reconnect); after quiet time without one the
// follower reads the stored results again.
type Follower struct {
	svc   *Service
	bus   *bus.Bus
	log   *slog.Logger
	id    string
	quiet time.Duration // re-read the store after this long without a notification
	sub   *bus.Subscription
	seen  []bool
	left  int
	queue []Result // read or heard, not yet returned

	// OnQuiet, when set, is called after each quiet time without a
	// notification, before the store is read again, with how many items
	// are known answered (a caller that ends stalled batches: settle.go).
	OnQuiet func(ctx context.Context, known int)
}

// Follow subscribes to the results of batch id, of total items. Call it
// before the batch is submitted: a result announced before the follower
// listens would be heard only at the next re-read. The caller must Close it.
func (s *Service) Follow(ctx context.Context, id string, total int) (*Follower, error) {
	sub, err := s.Bus.Subscribe(ctx, ResultsSubject(id))
	if err != nil {
		return nil, &StoreError{"the queue", fmt.Errorf("following %s: %w", id, err)}
	}
	return &Follower{
		svc: s, bus: s.Bus, log: s.log().With("batch", id), id: id, quiet: s.poll(),
		sub: sub, seen: make([]bool, total), left: total,
	}, nil
}

// Close stops listening.
func (f *Follower) Close() { f.sub.Unsubscribe() }

// Load queues every stored result not yet returned, in index order (Next
// does so itself after quiet time; a caller following a batch that may be
// under way calls it once after Follow).
func (f *Follower) Load(ctx context.Context) error {
	stored, err := f.svc.Results(ctx, f.id, len(f.seen))
	if err != nil {
		return err
	}
	for _, r := range stored {
		if !f.seen[r.Index] {
			f.queue = append(f.queue, r)
		}
	}
	return nil
}

// Known is how many items have been returned or are queued to be.
func (f *Follower) Known() int {
	n := len(f.seen) - f.left
	queued := map[int]bool{}
	for _, r := range f.queue {
		if !f.seen[r.Index] && !queued[r.Index] {
			queued[r.Index] = true
			n++
		}
	}
	return n
}

// Next returns the next item not returned before, io.EOF once every item
// has been returned, or ctx's error when ctx ends first.
func (f *Follower) Next(ctx context.Context) (Result, error) {
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
			return Result{}, io.EOF
		}
		qctx, cancel := context.WithTimeout(ctx, f.quiet)
		data, err := f.sub.Next(qctx)
		cancel()
		switch {
		case err == nil:
			r, derr := DecodeResult(data, len(f.seen))
			if derr != nil {
				f.log.Error("bad result notification", "err", derr)
				continue
			}
			f.queue = append(f.queue, r)
		case ctx.Err() != nil:
			return Result{}, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if f.OnQuiet != nil {
				f.OnQuiet(ctx, f.Known())
			}
			if err := f.Load(ctx); err != nil {
				return Result{}, err
			}
		default:
			return Result{}, fmt.Errorf("dispatch.Follow %s: %w", f.id, err)
		}
	}
}

// DecodeResult decodes a stored or announced result of a batch of total items.
func DecodeResult(data []byte, total int) (Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("decoding a result: %w", err)
	}
	if r.Index < 0 || r.Index >= total {
		return r, fmt.Errorf("result index %d outside the batch's %d items", r.Index, total)
	}
	return r, nil
}
