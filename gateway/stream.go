package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// batchLine is one line of GET /v1/batches/{id}/stream (schema BatchLine).
type batchLine struct {
	Index  int          `json:"index"`
	Reward float64      `json:"reward"`
	Result eval.Verdict `json:"result"`
	Cached bool         `json:"cached"`
	Shared bool         `json:"shared"`
	Valid  bool         `json:"valid"`
	Note   string       `json:"note,omitempty"`
	// Lost and FromLog: see batchResponse.LostItems and FromLog.
	Lost    bool `json:"lost,omitempty"`
	FromLog bool `json:"from_log,omitempty"`
}

// batchStatusTrailer is the HTTP trailer a stream that reached the
// batch's end closes with: done or lost.
const batchStatusTrailer = "Kernelgate-Batch-Status"

// streamBatch is GET /v1/batches/{id}/stream: NDJSON, one line per finished
// item, those already in first, each index once; it ends when all are in,
// when the client leaves, or when the server shuts down (the client
// reconnects and gets every line again).
func (s *Server) streamBatch(c *gin.Context) {
	ctx := c.Request.Context()
	id := c.Param("id")
	f, rec, aerr := s.follow(ctx, id)
	if aerr != nil {
		if ctx.Err() == nil {
			abort(c, aerr)
		}
		return
	}
	defer f.Close()
	// A stalled batch is checked at each quiet time; what that answers is
	// announced and comes through f like any result.
	f.OnQuiet = func(ctx context.Context, known int) {
		if s.evals.Stalled(id, known, rec.Total, rec.CreatedAt) {
			s.settleWithin(ctx, rec, time.Now())
		}
	}
	c.Header("Content-Type", "application/x-ndjson")
	c.Header("Cache-Control", "no-store")
	c.Header("X-Accel-Buffering", "no") // a proxy must not hold lines back
	c.Header("Trailer", batchStatusTrailer)
	c.Status(http.StatusOK)
	c.Writer.Flush() // the client sees 200 before the first verdict is in
	sctx, cancel := s.untilStopping(ctx)
	defer cancel()
	enc := json.NewEncoder(c.Writer)
	status := statusDone
	for {
		r, err := f.Next(sctx)
		if errors.Is(err, io.EOF) {
			c.Writer.Header().Set(batchStatusTrailer, status)
			return
		}
		if err != nil {
			if sctx.Err() == nil {
				s.log.Error("stream ended early", "batch", id, "err", err)
			}
			return
		}
		if r.Lost {
			status = statusLost
		}
		line := batchLine{Index: r.Index, Reward: r.Reward, Result: r.Verdict, Cached: r.Cached, Shared: r.Shared,
			Valid: r.Valid, Note: r.Note, Lost: r.Lost, FromLog: r.FromLog}
		if err := enc.Encode(line); err != nil {
			return // the client is gone
		}
		c.Writer.Flush()
	}
}

// follow reads batch id's record and follows its results, within
// StoreWait; a batch found stalled is checked for lost items first.
func (s *Server) follow(ctx context.Context, id string) (*dispatch.Follower, batchRecord, *apiError) {
	wctx, cancel := context.WithTimeout(ctx, s.cfg.StoreWait)
	defer cancel()
	rec, aerr := s.record(wctx, id, CodeBatchNotFound)
	if aerr != nil {
		return nil, rec, aerr
	}
	read := time.Now()
	f, err := s.evals.Follow(ctx, id, rec.Total) // subscribe before reading the store
	if err == nil {
		err = f.Load(wctx)
	}
	if err == nil && s.evals.Stalled(id, f.Known(), rec.Total, rec.CreatedAt) && s.settle(wctx, rec, read) {
		err = f.Load(wctx)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		if ctx.Err() == nil {
			s.log.Error("following a batch failed", "batch", id, "err", err)
		}
		return nil, rec, submitError(err)
	}
	return f, rec, nil
}
