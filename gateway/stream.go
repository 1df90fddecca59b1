package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

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
}

// streamBatch is GET /v1/batches/{id}/stream: NDJSON, one line per finished
// item, those already in first, each index once; it ends when all are in,
// when the client leaves, or when the server shuts down (the client
// reconnects and gets every line again).
func (s *Server) streamBatch(c *gin.Context) {
	ctx := c.Request.Context()
	id := c.Param("id")
	rec, aerr := s.record(ctx, id, CodeBatchNotFound)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	f, err := s.evals.Follow(ctx, id, rec.Total) // subscribe before reading the store
	if err == nil {
		defer f.Close()
		err = f.Load(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("following a batch failed", "batch", id, "err", err)
			abort(c, submitError(err))
		}
		return
	}
	c.Header("Content-Type", "application/x-ndjson")
	c.Header("Cache-Control", "no-store")
	c.Header("X-Accel-Buffering", "no") // a proxy must not hold lines back
	c.Status(http.StatusOK)
	c.Writer.Flush() // the client sees 200 before the first verdict is in
	sctx, cancel := s.untilStopping(ctx)
	defer cancel()
	enc := json.NewEncoder(c.Writer)
	for {
		r, err := f.Next(sctx)
		if err != nil {
			if !errors.Is(err, io.EOF) && sctx.Err() == nil {
				s.log.Error("stream ended early", "batch", id, "err", err)
			}
			return
		}
		if err := enc.Encode(batchLine{Index: r.Index, Reward: r.Reward, Result: r.Verdict, Cached: r.Cached, Shared: r.Shared, Valid: r.Valid, Note: r.Note}); err != nil {
			return // the client is gone
		}
		c.Writer.Flush()
	}
}
