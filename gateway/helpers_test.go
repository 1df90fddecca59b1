package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/kernelgate/kernelgate/internal/kgtest"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kernelgate/kernelgate"
	"github.com/kernelgate/kernelgate/bus"
)

var (
	specOnce sync.Once
	spec     *openapi3.T
	specErr  error
)

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	specOnce.Do(func() {
		spec, specErr = openapi3.NewLoader().LoadFromData(kernelgate.OpenAPI)
		if specErr == nil {
			specErr = spec.Validate(context.Background())
		}
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return spec
}

// checkSpec fails t unless the answer (status, content type, body, headers
// such as Retry-After and Location) is one openapi.yaml declares for method
// path. An NDJSON body is checked line by line.
func checkSpec(t *testing.T, method, path string, rec *httptest.ResponseRecorder) {
	t.Helper()
	doc := loadSpec(t)
	item := doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("%s %s is not in openapi.yaml", method, path)
	}
	resp := item.GetOperation(method).Responses.Status(rec.Code)
	if resp == nil || resp.Value == nil {
		t.Fatalf("%s %s: status %d is not declared in openapi.yaml (body %s)", method, path, rec.Code, rec.Body)
	}
	for name := range resp.Value.Headers {
		if rec.Header().Get(name) == "" {
			t.Errorf("%s %s %d: header %s missing", method, path, rec.Code, name)
		}
	}
	ct, _, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if err != nil {
		t.Fatalf("%s %s %d: Content-Type %q: %v", method, path, rec.Code, rec.Header().Get("Content-Type"), err)
	}
	if ct == "text/plain" {
		if resp.Value.Content.Get("text/plain") == nil {
			t.Errorf("%s %s %d: text/plain is not declared", method, path, rec.Code)
		}
		return
	}
	media := resp.Value.Content.Get(ct)
	if media == nil || media.Schema == nil {
		t.Fatalf("%s %s %d: no schema for %s in openapi.yaml", method, path, rec.Code, ct)
	}
	docs := [][]byte{rec.Body.Bytes()}
	if ct == "application/x-ndjson" {
		docs = bytes.Split(bytes.TrimSuffix(rec.Body.Bytes(), []byte("\n")), []byte("\n"))
		if rec.Body.Len() == 0 {
			docs = nil
		}
	}
	for _, doc := range docs {
		var body any
		if err := json.Unmarshal(doc, &body); err != nil {
			t.Fatalf("%s %s %d: body is not JSON: %v: %s", method, path, rec.Code, err, doc)
		}
		if err := media.Schema.Value.VisitJSON(body); err != nil {
			t.Errorf("%s %s %d: body does not match openapi.yaml: %v\nbody: %.2000s", method, path, rec.Code, err, doc)
		}
	}
	if h := resp.Value.Headers["Retry-After"]; h != nil {
		if _, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil {
			t.Errorf("%s %s %d: Retry-After %q is not an integer", method, path, rec.Code, rec.Header().Get("Retry-After"))
		}
	}
	if h := resp.Value.Headers["Location"]; h != nil && rec.Header().Get("Location") == "" {
		t.Errorf("%s %s %d: no Location header", method, path, rec.Code)
	}
}

func startBus(t *testing.T, opts bus.Options) *bus.Bus {
	t.Helper()
	opts.DataDir = t.TempDir()
	b, err := bus.Open(t.Context(), opts, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func do(t *testing.T, h http.Handler, method, path string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Host = "localhost" // a loopback gateway answers only to loopback names (doors.go)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body: %v: %s", err, rec.Body)
	}
	return e
}
