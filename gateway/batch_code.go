package gateway

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/export/dataset"
)

// batchCode is the body of GET /v1/batches/{id}/code (schema BatchCode):
// the code of a batch's items as the Parquet log holds it. The batch store
// keeps verdicts only, so an item's code is there once the sink has logged
// its evaluation (seconds after its result); items not logged yet are
// absent, and a client that wants them all polls until Logged is Total.
type batchCode struct {
	BatchID string         `json:"batch_id"`
	Total   int            `json:"total"`
	Logged  int            `json:"logged"`
	Items   []itemCodeJSON `json:"items"`
}

type itemCodeJSON struct {
	Index      int     `json:"index"`
	EvalID     string  `json:"eval_id"`
	Code       string  `json:"code"`
	Completion *string `json:"completion"`
}

// getBatchCode is GET /v1/batches/{id}/code: the dashboard's link from an
// item to its code. It reads the log's eval_id column from the batch's day
// on, and the code of the batch's rows only.
func (s *Server) getBatchCode(c *gin.Context) {
	rec, aerr := s.record(c.Request.Context(), c.Param("id"), CodeBatchNotFound)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	if s.deps.Exports.DataDir == "" {
		abort(c, newError(CodeNotReady, "", "this gateway keeps no Parquet log (no data directory): an item's code is not available here"))
		return
	}
	items, err := dataset.BatchCode(s.log, s.deps.Exports.DataDir, rec.ID, rec.CreatedAt)
	if err != nil && !errors.Is(err, dataset.ErrNoLog) {
		s.log.Error("reading a batch's code from the log failed", "batch", rec.ID, "err", err)
		abort(c, newError(CodeInternal, "", "batch %s: reading its code from the log failed", rec.ID))
		return
	}
	resp := batchCode{BatchID: rec.ID, Total: rec.Total, Items: []itemCodeJSON{}}
	for _, it := range items {
		if it.Index < rec.Total {
			resp.Items = append(resp.Items, itemCodeJSON{Index: it.Index, EvalID: it.EvalID, Code: it.Code, Completion: it.Completion})
		}
	}
	resp.Logged = len(resp.Items)
	c.JSON(http.StatusOK, resp)
}
