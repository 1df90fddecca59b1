package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// apiError is a refusal or failure of the API as a page shows it.
type apiError struct {
	Status  int    // the API's HTTP status
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: %d %s: %s", e.Path, e.Status, e.Code, e.Message)
}

// subRequest is a GET of path (with its query) on the API, made as the
// caller: its bearer header, or the key in the login cookie; its Host,
// address and request id, so that the API's doors, rate limits and logs
// see the same caller.
func subRequest(r *http.Request, path string) *http.Request {
	u, _ := url.Parse(path) // paths are built here, from escaped parts
	sub := r.Clone(r.Context())
	sub.Method = http.MethodGet
	sub.URL = u
	sub.RequestURI = u.RequestURI()
	sub.Body, sub.ContentLength = http.NoBody, 0
	sub.Header = r.Header.Clone()
	sub.Header.Del("Cookie") // the API reads bearer keys only
	sub.Header.Del("Content-Type")
	if sub.Header.Get("Authorization") == "" {
		if key := sessionKey(r); key != "" {
			sub.Header.Set("Authorization", "Bearer "+key)
		}
	}
	return sub
}

// readRequest is subRequest for a read the handler decodes itself: plain
// text or JSON, never compressed (the browser's Accept-Encoding would get
// /metrics gzipped).
func readRequest(r *http.Request, path string) *http.Request {
	sub := subRequest(r, path)
	sub.Header.Del("Accept-Encoding")
	sub.Header.Set("Accept", "application/json, text/plain")
	return sub
}

// get reads path from the API into v (JSON); a non-2xx answer is an *apiError.
func (h *Handler) get(r *http.Request, path string, v any) *apiError {
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, readRequest(r, path))
	if rec.Code/100 != 2 {
		e := &apiError{Status: rec.Code, Path: path}
		if json.Unmarshal(rec.Body.Bytes(), e) != nil || e.Message == "" {
			e.Code, e.Message = "unreadable", strings.TrimSpace(rec.Body.String())
		}
		return e
	}
	if raw, ok := v.(*[]byte); ok {
		*raw = rec.Body.Bytes()
		return nil
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		return &apiError{Status: http.StatusBadGateway, Code: "undecodable", Message: err.Error(), Path: path}
	}
	return nil
}

// readable are the API paths /ui/api/ passes through: reads only. Writes
// stay with API clients and their keys; a cookie never reaches them.
var readable = []string{"/v1/batches/", "/v1/evaluations/", "/v1/searches", "/v1/skills", "/v1/tasks", "/v1/gpus", "/v1/redteam/", "/metrics"}

// passThrough serves GET /ui/api/<path> as the API's GET <path>, streams
// (the search's and a batch's events) included: the page's script cannot
// send the login cookie's key as a bearer header itself.
func (h *Handler) passThrough(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/ui/api")
	allowed := false
	for _, p := range readable {
		allowed = allowed || path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, p)
	}
	if !allowed || strings.Contains(path, "..") || strings.Contains(r.URL.Path, "..") {
		writeJSONError(w, http.StatusNotFound, "not_found", "the dashboard passes through only "+strings.Join(readable, ", "))
		return
	}
	target := path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	h.api.ServeHTTP(w, subRequest(r, target))
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}
