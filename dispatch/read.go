package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// Record is what Submit stored for batch id (Batch.Record); ok false for an
// unknown, or expired, id.
func (s *Service) Record(ctx context.Context, id string) ([]byte, bool, error) {
	data, ok, err := s.Bus.Batch(ctx, id)
	if err != nil {
		return nil, false, &StoreError{"the result store", err}
	}
	return data, ok, nil
}

// Batches lists the ids of the batches stored (those not yet expired).
func (s *Service) Batches(ctx context.Context) ([]string, error) {
	ids, err := s.Bus.BatchIDs(ctx)
	if err != nil {
		return nil, &StoreError{"the result store", err}
	}
	return ids, nil
}

// Results are the results of batch id (of total items) stored so far, in
// index order. One that does not decode is logged and left out. Within a
// deadline, the one-pass read gets half of what is left, so that the read
// one by one still fits when it does not finish.
func (s *Service) Results(ctx context.Context, id string, total int) ([]Result, error) {
	pass, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		pass, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(d)/2))
	}
	stored, err := s.Bus.Results(pass, id)
	cancel()
	if errors.Is(err, bus.ErrStoreTimeout) && ctx.Err() == nil {
		// A damaged block can leave the one-pass read without its end
		// (bus/deadline.go); the items one by one still answer.
		s.log().Warn("reading a batch's results in one pass did not finish; reading them one by one", "batch", id, "err", err)
		stored, err = s.resultsByIndex(ctx, id, total)
	}
	if err != nil {
		return nil, &StoreError{"the result store", err}
	}
	out := make([]Result, 0, len(stored))
	for _, data := range stored {
		r, err := DecodeResult(data, total)
		if err != nil {
			s.log().Error("bad stored result", "batch", id, "err", err)
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Result) int { return a.Index - b.Index })
	return out, nil
}

// resultsByIndex reads the results of a batch of total items one key at a time.
func (s *Service) resultsByIndex(ctx context.Context, id string, total int) (map[int][]byte, error) {
	out := map[int][]byte{}
	for i := range total {
		data, _, ok, err := s.Bus.Result(ctx, id, i)
		if err != nil {
			return nil, err
		}
		if ok {
			out[i] = data
		}
	}
	return out, nil
}

// observeQueue is the queue group of the gateways' result observers: each
// announced result is seen by one gateway, so sums over them are right.
const observeQueue = "kernelgate-metrics"

// Observe calls fn with every result announced on the bus (workers' and
// the gateways' own), each by one of the processes observing, until ctx
// ends or the subscription fails; it returns once it has subscribed and
// runs fn on its own goroutine. done is closed when it stops.
func (s *Service) Observe(ctx context.Context, fn func(Result)) (done <-chan struct{}, err error) {
	sub, err := s.Bus.Observe(ctx, ResultsSubject(">"), observeQueue)
	if err != nil {
		return nil, &StoreError{"the queue", err}
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer sub.Unsubscribe()
		for {
			data, err := sub.Next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log().Warn("result observer stopped", "err", err)
				}
				return
			}
			var r Result
			if err := json.Unmarshal(data, &r); err != nil {
				s.log().Warn("undecodable result notification", "err", err)
				continue
			}
			fn(r)
		}
	}()
	return ch, nil
}
