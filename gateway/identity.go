package gateway

import (
	"context"
	"regexp"

	"github.com/gin-gonic/gin"
)

// identity names who asked: the HTTP request and the API key. It travels in
// the request's context to every job the request queues, so each logged row
// (evaluations, episode_steps) carries request_id and client_id.
type identity struct {
	requestID string // the client's X-Request-ID when sane, else generated
	clientID  string // the API key's name; "" without keys
	// sent: requestID is the client's own (a retry of one request sends the
	// same one: idempotency.go keys on it when no Idempotency-Key is given).
	sent bool
}

type identityKey struct{}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// identify is the middleware after authenticate: it sets the identity and
// echoes the request id in X-Request-ID.
func (s *Server) identify(c *gin.Context) {
	id := identity{requestID: c.GetHeader("X-Request-ID"), sent: true}
	if !requestIDPattern.MatchString(id.requestID) {
		id.requestID, id.sent = newID("r_"), false
	}
	if caller, ok := c.Get(callerKey); ok {
		id.clientID, _ = caller.(string)
	}
	c.Header("X-Request-ID", id.requestID)
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), identityKey{}, id))
	c.Next()
}

func identityOf(ctx context.Context) identity {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id
}
