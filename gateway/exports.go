package gateway

import (
	"errors"
	"net/http"
	"path/filepath"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/export/dataset"
)

// Exports configures POST /v1/exports. Zero (no DataDir): it answers 503.
type Exports struct {
	DataDir string // serve's --data: the log is read from DataDir/parquet, exports go to DataDir/exports/<id>
	Version string // kernelgate's, for the manifest
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
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	var req exportRequest
	if err := decodeStrict(body, &req); err != nil {
		abort(c, newError(CodeBadJSON, jsonField(err), "malformed JSON: %v", err))
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
	ctx := c.Request.Context()
	ts, err := s.deps.Tasks.List(ctx)
	if err != nil {
		s.log.Error("listing tasks for an export failed", "err", err)
		abort(c, newError(CodeInternal, "", "the task registry is unavailable"))
		return
	}
	id := newID("exp_")
	src := dataset.Source{DataDir: cfg.DataDir, Tasks: ts, Version: cfg.Version, ExportID: id}
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
