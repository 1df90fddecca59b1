package gateway

import (
	"errors"
	"math"
	"net/http"
	"path/filepath"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/export/dataset"
)

// Exports configures POST /v1/exports. Zero (no DataDir): it answers 503.
type Exports struct {
	DataDir string // serve's --data: the log is read from DataDir/parquet, exports go to DataDir/exports/<id>
	Version string // kernelgate's, for the manifest
}

// DefaultExportsPerHour is serve --exports-per-hour: an export reads the
// whole log and writes a copy of what it selects, so a key that asks for
// one a minute is a script gone wrong, not a training job.
const DefaultExportsPerHour = 60

// newExportQuota is a bucket per key of perHour exports, refilled evenly
// over the hour; nil (no quota) when perHour is negative. Callers without a
// key (open mode) share one bucket.
func newExportQuota(perHour int, now func() time.Time) *limiter {
	if perHour < 0 {
		return nil
	}
	return newLimiter(float64(perHour)/3600, perHour, now)
}

// takeExport takes one export from the caller's quota, or says 429.
func (s *Server) takeExport(c *gin.Context) *apiError {
	if s.exportQuota == nil {
		return nil
	}
	name := identityOf(c.Request.Context()).clientID
	ok, wait := s.exportQuota.take(name)
	if ok {
		return nil
	}
	e := newError(CodeQuotaExceeded, "", "export quota of %d per hour spent for %s; the next one is available in %s (serve --exports-per-hour)",
		s.exportQuota.burst, callerName(name), wait.Round(time.Second))
	e.retryAfter = max(1, int(math.Ceil(wait.Seconds())))
	return e
}

// ExportsDir is where POST /v1/exports writes, under the data directory.
const ExportsDir = "exports"

// exportRequest is the body of POST /v1/exports (schema ExportRequest):
// the CLI's flags, as dataset.Request names them.
type exportRequest = dataset.Request

// exportManifest is the 201 body (schema ExportManifest): the manifest.json
// written with the export.
type exportManifest = dataset.Manifest

func (s *Server) exportRoutes(r gin.IRoutes) {
	r.POST("/v1/exports", s.createExport)
	r.GET("/v1/exports/:id/files/*name", s.downloadExport) // exports_download.go
}

// createExport builds an export synchronously (the logs are small enough)
// under <data>/exports/<export_id>/ and answers 201 with its manifest. A
// bad format or filter is 400 with the CLI's message.
func (s *Server) createExport(c *gin.Context) {
	cfg := s.deps.Exports
	if cfg.DataDir == "" {
		abort(c, newError(CodeNotReady, "", "exports are not configured on this server (no data directory)"))
		return
	}
	var req exportRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	spec, err := req.Parse()
	if err != nil {
		var field string
		if ie, ok := errors.AsType[*dataset.InputError](err); ok {
			field = ie.Field
		}
		abort(c, newError(CodeInvalidRequest, field, "%s", err))
		return
	}
	// Counted once the request is valid: a typo costs no quota.
	if aerr := s.takeExport(c); aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	ts, err := s.deps.Tasks.List(ctx)
	if err != nil {
		s.log.Error("listing tasks for an export failed", "err", err)
		abort(c, storeError(err, "the task registry"))
		return
	}
	id := newID("exp_")
	src := dataset.Source{DataDir: cfg.DataDir, Tasks: ts, Version: cfg.Version, ExportID: id, Log: s.log}
	m, err := dataset.Write(ctx, spec, src, filepath.Join(cfg.DataDir, ExportsDir, id), false)
	switch {
	case errors.Is(err, dataset.ErrNoLog):
		abort(c, newError(CodeNotFound, "", "nothing has been logged yet: the data directory holds no Parquet log"))
		return
	case err != nil:
		s.log.Error("export failed", "export_id", id, "format", spec.Format, "err", err)
		abort(c, newError(CodeInternal, "", "export %s failed", id))
		return
	}
	s.log.Info("export written", "export_id", id, "format", m.Format, "rows", m.Rows)
	c.JSON(http.StatusCreated, m)
}
