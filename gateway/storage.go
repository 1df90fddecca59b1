package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/bus"
)

// A full disk costs answers, not data (bus/storage.go): while the store
// cannot take writes, /readyz says why (503) and every request that would
// write is refused up front with 507 insufficient_storage and Retry-After,
// before any of its work is queued; reads go on. A write that meets a full
// store mid-request is 507 too, and a store that does not answer is 503
// unavailable: never a 500. The bus's watcher clears the state once space
// returns, so the gateway takes work again by itself.

// storageGate refuses writes while the store cannot take them.
func (s *Server) storageGate(c *gin.Context) {
	// The web UI's routes write nothing to the store (its login sets a cookie).
	if s.deps.Bus == nil || !writes(c.Request.Method) || strings.HasPrefix(c.Request.URL.Path, "/ui/") {
		c.Next()
		return
	}
	if err := s.deps.Bus.Writable(); err != nil {
		abort(c, newError(CodeStorageFull, "", "%v; retry later", err))
		return
	}
	c.Next()
}

// writes reports whether a request of this method may write to the store.
func writes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// storeError is the answer to a failed read or write of the queue or a
// store: 507 when it was refused for space, else 503 (the store did not
// answer: a cluster electing a leader, a store being restarted). what names
// the store for the client ("the queue", "the result store").
func storeError(err error, what string) *apiError {
	if bus.IsStorageFull(err) {
		return newError(CodeStorageFull, "", "%s cannot take writes now (storage full); retry later", what)
	}
	if errors.Is(err, bus.ErrStoreTimeout) {
		return newError(CodeUnavailable, "", "%s did not answer in time; retry later", what)
	}
	return newError(CodeUnavailable, "", "%s is unavailable; retry later", what)
}
