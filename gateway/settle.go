package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/reward"
)

// settle ends the items of rec's batch that nothing can answer any more
// (dispatch.Service.Settle), from the evaluation log or as lost; read is
// when rec was read. It reports whether it answered any; a failure is
// logged, and the batch is checked again at its next stall.
func (s *Server) settle(ctx context.Context, rec batchRecord, read time.Time) bool {
	b := dispatch.Ended{ID: rec.ID, Total: rec.Total, Created: rec.CreatedAt, TaskName: rec.TaskName,
		TaskHash: rec.TaskHash, RewardFn: rec.RewardFn}
	got, err := s.evals.Settle(ctx, b, read, s.fromLog)
	if err != nil {
		s.log.Warn("checking a stalled batch for lost items failed", "batch", rec.ID, "err", err)
		return false
	}
	return len(got.Lost)+len(got.Recovered) > 0
}

// settleWithin is settle bounded by StoreWait, for a caller whose ctx
// has no deadline of its own (a stream).
func (s *Server) settleWithin(ctx context.Context, rec batchRecord, read time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreWait)
	defer cancel()
	return s.settle(ctx, rec, read)
}

// fromLog reads the items of b logged in the evaluations table, as the
// results they were: verdict, reward, valid and note as the batch's reward
// function gave them.
func (s *Server) fromLog(_ context.Context, b dispatch.Ended) (map[int]dispatch.Result, error) {
	if s.deps.Exports.DataDir == "" {
		return nil, nil // no log here
	}
	items, err := dataset.BatchRows(s.log, s.deps.Exports.DataDir, b.ID, b.Created)
	if errors.Is(err, dataset.ErrNoLog) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[int]dispatch.Result, len(items))
	for _, it := range items {
		row := it.Row
		r := dispatch.Result{Index: it.Index, ID: row.EvalID, Verdict: row.Verdict(), Cached: row.Cached}
		if row.SourceEvalID != nil {
			r.Source, r.Shared = *row.SourceEvalID, !row.Cached
		}
		if row.QueueWaitMS != nil {
			r.QueueWaitMS = *row.QueueWaitMS
		}
		if row.ExecMS != nil {
			r.ExecMS = *row.ExecMS
		}
		if f, err := reward.Lookup(row.RewardFn); err == nil {
			res := f(r.Verdict)
			r.Reward, r.Valid, r.Note = res.Reward, res.Valid, res.Note
		}
		if row.Reward != nil { // what the client would have been given
			r.Reward = *row.Reward
		}
		if row.Valid != nil {
			r.Valid = *row.Valid
		}
		out[it.Index] = r
	}
	return out, nil
}
