package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/export/dataset"
)

// exportIDPattern is newID("exp_"): rand.Text is 26 base32 characters.
var exportIDPattern = regexp.MustCompile(`^exp_[A-Z2-7]{26}$`)

// downloadTypes are the Content-Types of export files by extension; any
// other is application/octet-stream.
var downloadTypes = map[string]string{
	".parquet": "application/vnd.apache.parquet",
	".jsonl":   "application/x-ndjson",
	".json":    "application/json",
}

// downloadExport is GET /v1/exports/{id}/files/{name}: one file of an
// export made by POST /v1/exports, as an attachment. Only the names its
// manifest lists (and manifest.json itself) are served, opened through an
// os.Root on the export's directory, so neither "..", an absolute name nor
// a symlink reaches outside it; anything else is 404 not_found.
func (s *Server) downloadExport(c *gin.Context) {
	if s.deps.Exports.DataDir == "" {
		abort(c, newError(CodeNotReady, "", "exports are not configured on this server (no data directory)"))
		return
	}
	id, name := c.Param("id"), strings.TrimPrefix(c.Param("name"), "/")
	f, size, aerr := s.openExportFile(id, name)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	defer f.Close()
	ct := downloadTypes[path.Ext(name)]
	if ct == "" {
		ct = "application/octet-stream"
	}
	h := c.Writer.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	h.Set("X-Content-Type-Options", "nosniff")
	c.Status(http.StatusOK)
	if _, err := io.Copy(c.Writer, f); err != nil && c.Request.Context().Err() == nil {
		s.log.Warn("export download cut short", "export_id", id, "file", name, "err", err)
	}
}

// openExportFile opens name in export id's directory when the export's
// manifest lists it; the error is 404 for anything not served.
func (s *Server) openExportFile(id, name string) (*os.File, int64, *apiError) {
	if !exportIDPattern.MatchString(id) {
		return nil, 0, newError(CodeNotFound, "id", "no export %q", id)
	}
	root, err := os.OpenRoot(filepath.Join(s.deps.Exports.DataDir, ExportsDir, id))
	if err != nil {
		return nil, 0, s.exportFileError(id, "", err)
	}
	defer root.Close()
	raw, err := root.ReadFile(dataset.ManifestFile)
	if err != nil {
		return nil, 0, s.exportFileError(id, "", err)
	}
	var m dataset.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.ExportID != id {
		s.log.Warn("export directory holds no manifest of its own", "export_id", id, "manifest_export_id", m.ExportID, "err", err)
		return nil, 0, newError(CodeNotFound, "id", "no export %q", id)
	}
	if _, listed := m.Files[name]; (!listed && name != dataset.ManifestFile) || !filepath.IsLocal(name) {
		return nil, 0, newError(CodeNotFound, "name", "export %s has no file %q", id, name)
	}
	f, err := root.Open(name) // refuses a symlink that leaves the directory
	if err != nil {
		return nil, 0, s.exportFileError(id, name, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, newError(CodeNotFound, "name", "export %s has no file %q", id, name)
	}
	return f, fi.Size(), nil
}

// exportFileError answers a failure to open an export's directory or its
// manifest (name ""), or one of its files. A missing one is 404. A file
// that will not open otherwise (a symlink out of the directory, whose
// error os exports no sentinel for) is 404 too, logged; a directory or
// manifest that will not is 500.
func (s *Server) exportFileError(id, name string, err error) *apiError {
	switch {
	case name == "" && errors.Is(err, fs.ErrNotExist):
		return newError(CodeNotFound, "id", "no export %q", id)
	case name == "":
		s.log.Error("export unreadable", "export_id", id, "err", err)
		return newError(CodeInternal, "", "export %s cannot be read; see the server's log", id)
	case !errors.Is(err, fs.ErrNotExist):
		s.log.Warn("export file not served", "export_id", id, "file", name, "err", err)
	}
	return newError(CodeNotFound, "name", "export %s has no file %q", id, name)
}
