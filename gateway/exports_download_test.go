package gateway

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// checkDownload fails t unless rec is a 200 attachment of want, with the
// Content-Type wantType, as openapi.yaml declares the download.
func checkDownload(t *testing.T, rec *httptest.ResponseRecorder, name, wantType string, want []byte) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", name, rec.Code, rec.Body)
	}
	if !bytes.Equal(rec.Body.Bytes(), want) {
		t.Errorf("%s: %d bytes served, not the %d on disk", name, rec.Body.Len(), len(want))
	}
	if ct := rec.Header().Get("Content-Type"); ct != wantType {
		t.Errorf("%s: Content-Type %q, want %q", name, ct, wantType)
	}
	disp, params, err := mime.ParseMediaType(rec.Header().Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != filepath.Base(name) {
		t.Errorf("%s: Content-Disposition %q", name, rec.Header().Get("Content-Disposition"))
	}
	resp := loadSpec(t).Paths.Find("/v1/exports/{id}/files/{name}").Get.Responses.Status(200).Value
	if resp.Content.Get(wantType) == nil {
		t.Errorf("%s: openapi.yaml does not declare %s", name, wantType)
	}
	for h := range resp.Headers {
		if rec.Header().Get(h) == "" {
			t.Errorf("%s: header %s missing", name, h)
		}
	}
}

func getFile(t *testing.T, h http.Handler, id, name string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, "GET", "/v1/exports/"+id+"/files/"+name, nil)
}

// A file of a real export downloads byte for byte.
func TestDownloadExport(t *testing.T) {
	h, data := exportServer(t, true)
	for _, c := range []struct {
		format, file, ctype string
	}{
		{"sft", "sft.parquet", "application/vnd.apache.parquet"},
		{"sft", dataset.ManifestFile, "application/json"},
		{"arrow", "evaluations.arrow", "application/octet-stream"},
	} {
		var m dataset.Manifest
		rec := call(t, h, "POST", "/v1/exports", "/v1/exports", map[string]any{"format": c.format}, &m)
		if rec.Code != http.StatusCreated {
			t.Fatalf("export %s: %d %s", c.format, rec.Code, rec.Body)
		}
		if _, ok := m.Files[c.file]; !ok && c.file != dataset.ManifestFile {
			t.Fatalf("export %s lists %v, not %s", c.format, m.Files, c.file)
		}
		disk, err := os.ReadFile(filepath.Join(data, ExportsDir, m.ExportID, c.file))
		if err != nil || len(disk) == 0 {
			t.Fatalf("%s on disk: %d bytes, %v", c.file, len(disk), err)
		}
		checkDownload(t, getFile(t, h, m.ExportID, c.file), c.file, c.ctype, disk)
	}
}

// handExport writes an export directory by hand: its manifest lists
// names that must not be served as well as one that must.
func handExport(t *testing.T, data string) string {
	t.Helper()
	id := "exp_ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	dir := filepath.Join(data, ExportsDir, id)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(data, "secret.txt")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "the server's own file")
	write(filepath.Join(dir, "rows.jsonl"), "{\"a\":1}\n{\"a\":2}\n")
	write(filepath.Join(dir, "unlisted.parquet"), "PAR1")
	if err := os.Symlink(secret, filepath.Join(dir, "escape.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret.txt", filepath.Join(dir, "relative.jsonl")); err != nil {
		t.Fatal(err)
	}
	m := dataset.Manifest{ExportID: id, Format: dataset.FormatSFT, Files: map[string]int64{
		"rows.jsonl": 2, "escape.parquet": 1, "relative.jsonl": 1, "../../secret.txt": 1,
		secret: 1, "sub": 0, "missing.parquet": 0,
	}}
	raw, _ := json.Marshal(m)
	write(filepath.Join(dir, dataset.ManifestFile), string(raw))
	return id
}

// Only names the manifest lists, inside the export's directory, are
// served; every other attempt is 404 not_found.
func TestDownloadExportRefusesEscapes(t *testing.T) {
	h, data := exportServer(t, false)
	id := handExport(t, data)
	checkDownload(t, getFile(t, h, id, "rows.jsonl"), "rows.jsonl", "application/x-ndjson", []byte("{\"a\":1}\n{\"a\":2}\n"))
	for _, c := range []struct{ path, field string }{
		{id + "/files/unlisted.parquet", "name"},                     // in the directory, not in the manifest
		{id + "/files/escape.parquet", "name"},                       // listed: a symlink out of the directory
		{id + "/files/relative.jsonl", "name"},                       // listed: a relative one
		{id + "/files/..%2F..%2Fsecret.txt", "name"},                 // listed, with ..
		{id + "/files/" + filepath.Join(data, "secret.txt"), "name"}, // listed, absolute
		{id + "/files/sub", "name"},                                  // listed: a directory
		{id + "/files/missing.parquet", "name"},                      // listed: not written
		{id + "/files/", "name"},
		{"exp_AAAAAAAAAAAAAAAAAAAAAAAAAA/files/rows.jsonl", "id"}, // no such export
		{"nope/files/rows.jsonl", "id"},
		{"..%2F" + id + "/files/rows.jsonl", ""}, // no route
		{id + "/files/../../../secret.txt", "name"},
	} {
		t.Run(c.path, func(t *testing.T) {
			rec := do(t, h, "GET", "/v1/exports/"+c.path, nil)
			if c.field != "" {
				checkSpec(t, "GET", "/v1/exports/{id}/files/{name}", rec)
			}
			wantError(t, rec, http.StatusNotFound, CodeNotFound, c.field)
			if strings.Contains(rec.Body.String(), "the server's own file") {
				t.Fatal("the secret leaked")
			}
		})
	}
	// An export directory whose manifest names another export is none.
	other := filepath.Join(data, ExportsDir, "exp_BBBBBBBBBBBBBBBBBBBBBBBBBB")
	if err := os.CopyFS(other, os.DirFS(filepath.Join(data, ExportsDir, id))); err != nil {
		t.Fatal(err)
	}
	wantError(t, getFile(t, h, filepath.Base(other), "rows.jsonl"), http.StatusNotFound, CodeNotFound, "id")

	off := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	rec := getFile(t, off, id, "rows.jsonl")
	checkSpec(t, "GET", "/v1/exports/{id}/files/{name}", rec)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "not configured")
}

// Downloads need scope export, as making the export does.
func TestDownloadExportAuth(t *testing.T) {
	_, data := exportServer(t, false)
	id := handExport(t, data)
	f, keys := keyFile(t, map[string]string{"trainer": "reward", "exporter": "export"})
	h := New(Config{}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t), Exports: Exports{DataDir: data}}).Handler()
	for _, c := range []struct {
		key    string
		status int
	}{{"", 401}, {"trainer", 403}, {"exporter", 200}} {
		auth := ""
		if c.key != "" {
			auth = "Bearer " + keys[c.key]
		}
		rec := request(t, h, "GET", "/v1/exports/"+id+"/files/rows.jsonl", auth, nil)
		if rec.Code != c.status {
			t.Fatalf("key %q: status %d, want %d: %s", c.key, rec.Code, c.status, rec.Body)
		}
		if c.status != 200 {
			checkSpec(t, "GET", "/v1/exports/{id}/files/{name}", rec)
			if strings.Contains(rec.Body.String(), `"a":1`) {
				t.Errorf("key %q: the file leaked", c.key)
			}
		}
	}
}
