package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Batches left running by an earlier run (a crash, a damaged store) would
// otherwise wait for a reader to find them stalled: at start, one pass
// settles every stored batch that is not done (settle.go), and /readyz
// says degraded meanwhile. The gateway serves throughout: a batch waiting
// in the queue is left alone, and new work is unaffected, so a load
// balancer (which reads the status code) keeps sending requests.

// reconcileState is the pass's progress for /readyz.
type reconcileState struct {
	running       atomic.Bool
	checked, left atomic.Int64
}

// detail is /readyz's why while the pass runs, else "".
func (r *reconcileState) detail() string {
	if !r.running.Load() {
		return ""
	}
	return fmt.Sprintf("reconciling batches left running by an earlier run: %d checked, %d to go; "+
		"their GETs may still say running", r.checked.Load(), r.left.Load())
}

// reconcileTimeout bounds one batch's check in the pass (the queue read
// whole, the log read for its missing items).
const reconcileTimeout = 30 * time.Second

// startReconcile runs the pass until it ends or ctx does; wait waits for it.
func (s *Server) startReconcile(ctx context.Context) (wait func()) {
	if s.deps.Bus == nil {
		return func() {}
	}
	s.reconcile.running.Store(true)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer s.reconcile.running.Store(false)
		s.reconcileAll(ctx)
	}()
	return wg.Wait
}

// reconcileAll reads every batch's record, then settles those not done:
// the records are read before the queue is, so a batch only waiting in it
// is seen there.
func (s *Server) reconcileAll(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	ids, err := s.evals.Batches(lctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("listing batches to reconcile failed; stalled batches are checked when read", "err", err)
		}
		return
	}
	var open []batchRecord
	for _, id := range ids {
		rctx, cancel := context.WithTimeout(ctx, s.cfg.StoreWait)
		resp, rec, aerr := s.readBatch(rctx, id)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if aerr != nil {
			s.log.Warn("reading a batch to reconcile failed", "batch", id, "err", aerr.Message)
			continue
		}
		if !resp.complete() {
			open = append(open, rec)
		}
	}
	read := time.Now()
	s.reconcile.left.Store(int64(len(open)))
	ended := 0
	for _, rec := range open {
		sctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
		if s.settle(sctx, rec, read) {
			ended++
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		s.reconcile.checked.Add(1)
		s.reconcile.left.Add(-1)
	}
	s.log.Info("batches reconciled", "stored", len(ids), "running", len(open), "ended", ended)
}

// readBatch is rec's batch with the results stored so far, without a check.
func (s *Server) readBatch(ctx context.Context, id string) (*batchResponse, batchRecord, *apiError) {
	rec, aerr := s.record(ctx, id, CodeBatchNotFound)
	if aerr != nil {
		return nil, rec, aerr
	}
	resp, aerr := s.readResults(ctx, rec)
	return resp, rec, aerr
}
