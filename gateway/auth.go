package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/gateway/apikey"
)

// scopeRule gives the routes under path (gin's pattern, ":id" and all) the
// scope a key needs; method "" matches every method.
type scopeRule struct {
	method string
	path   string
	scope  apikey.Scope // "" with open: no key at all
	open   bool
}

// routeScopes is the one place a route gets its scope. A rule covers its
// path and every route under it ("/v1/tasks" covers "/v1/tasks/:id"); the
// first matching rule wins. A new route adds a line here:
// TestEveryRouteHasAScope fails until it does, and until then the route
// needs an admin key.
var routeScopes = []scopeRule{
	{path: "/healthz", open: true},
	{path: "/readyz", open: true},
	{path: "/openapi.yaml", open: true}, // the contract is no secret
	{path: "/openapi.json", open: true},
	{path: "/v1/rewards", scope: apikey.Reward},
	{path: "/v1/evaluations", scope: apikey.Reward},
	{path: "/v1/episodes", scope: apikey.Reward},
	{path: "/v1/batches", scope: apikey.Reward},
	{path: "/openrlhf", scope: apikey.Reward},
	{method: http.MethodGet, path: "/v1/tasks", scope: apikey.Reward},
	{path: "/v1/tasks", scope: apikey.Admin}, // registering or changing tasks
	{path: "/v1/searches", scope: apikey.Search},
	{method: http.MethodGet, path: "/v1/skills", scope: apikey.Search},
	{path: "/v1/skills", scope: apikey.Admin}, // retiring a rule changes every later search
	{path: "/v1/exports", scope: apikey.Export},
	{path: "/v1/gpus", scope: apikey.Admin},
	{path: "/metrics", scope: apikey.Admin},
}

// scopeFor finds the rule of a matched route; ok is false when none covers it.
func scopeFor(method, route string) (scopeRule, bool) {
	for _, r := range routeScopes {
		if (r.method == "" || r.method == method) &&
			(route == r.path || strings.HasPrefix(route, r.path+"/")) {
			return r, true
		}
	}
	return scopeRule{}, false
}

// callerKey is the gin context key holding the caller's key name ("" for
// an anonymous caller in open mode); unset on open routes.
const callerKey = "kernelgate.caller"

// authenticate checks the bearer key against the route's scope.
//
// Keys are enforced when the server listens beyond loopback, and also on
// loopback as soon as one key exists: behind a reverse proxy every request
// comes from loopback, so the caller's address proves nothing. Open mode
// (loopback, no keys) serves everything, /metrics and /v1/gpus included, to
// anyone who can reach the port, which is only this machine.
//
// A path that matches no route needs a valid key of any scope before it is
// told 404, so that unauthenticated callers learn nothing of the API.
func (s *Server) authenticate(c *gin.Context) {
	rule, known := scopeFor(c.Request.Method, c.FullPath())
	switch {
	case rule.open:
		c.Next()
		return
	case !known && c.FullPath() != "":
		rule.scope = apikey.Admin // a route missing from routeScopes
	}
	n, err := s.deps.Keys.Len()
	if err != nil {
		s.log.Error("API keys cannot be read; refusing every request that needs one", "err", err)
		abort(c, newError(CodeInternal, "", "the server's API key file cannot be read; see its log"))
		return
	}
	if n == 0 && !s.requireKeys.Load() {
		c.Set(callerKey, "")
		c.Next()
		return
	}
	secret, aerr := bearer(c.Request.Header, n)
	if aerr == nil {
		k, ok, err := s.deps.Keys.Lookup(secret)
		switch {
		case err != nil:
			s.log.Error("API keys cannot be read", "err", err)
			abort(c, newError(CodeInternal, "", "the server's API key file cannot be read; see its log"))
			return
		case !ok:
			aerr = newError(CodeUnauthorized, "", "unknown or revoked API key")
		case rule.scope != "" && !k.Has(rule.scope):
			c.Header("WWW-Authenticate", fmt.Sprintf(`Bearer realm="kernelgate", error="insufficient_scope", scope="%s"`, rule.scope))
			abort(c, newError(CodeForbidden, "", "key %q lacks scope %q, which %s %s needs (it has %s)",
				k.Name, rule.scope, c.Request.Method, c.FullPath(), joinScopes(k.Scopes)))
			return
		default:
			c.Set(callerKey, k.Name)
			c.Next()
			return
		}
	}
	c.Header("WWW-Authenticate", `Bearer realm="kernelgate"`)
	abort(c, aerr)
}

// bearer extracts the key of an "Authorization: Bearer <key>" header; n is
// the number of keys the server holds, for the message when it has none.
func bearer(h http.Header, n int) (string, *apiError) {
	if n == 0 {
		return "", newError(CodeUnauthorized, "", "this server requires an API key and has none: create one with `kernelgate keys create`")
	}
	vals := h.Values("Authorization")
	switch {
	case len(vals) == 0:
		return "", newError(CodeUnauthorized, "", "an API key is required: send the header Authorization: Bearer <key>")
	case len(vals) > 1:
		return "", newError(CodeUnauthorized, "", "more than one Authorization header")
	}
	scheme, secret, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	secret = strings.TrimSpace(secret)
	switch {
	case !strings.EqualFold(scheme, "Bearer"):
		return "", newError(CodeUnauthorized, "", "the Authorization header must be Bearer <key>")
	case secret == "":
		return "", newError(CodeUnauthorized, "", "the Authorization header has no key after Bearer")
	case !apikey.LooksLikeKey(secret):
		return "", newError(CodeUnauthorized, "", "malformed API key: kernelgate keys are %s followed by 52 base32 characters", apikey.Prefix)
	}
	return secret, nil
}

func joinScopes(scopes []apikey.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}

// IsLoopback reports whether a listen address (host:port) accepts only
// local connections: "localhost" or a loopback IP. An empty host means
// every interface. (bus.IsLoopback, which the queue's listener checks too.)
func IsLoopback(addr string) bool { return bus.IsLoopback(addr) }

// ErrNoKeys is CheckKeys's refusal of an address beyond loopback without keys.
var ErrNoKeys = errors.New("no API keys")

// CheckKeys refuses to serve on addr when that would expose the API without
// keys: beyond loopback, at least one key must exist. A key file that
// cannot be read is refused on any address.
func CheckKeys(addr string, keys *apikey.Keyring) error {
	n, err := keys.Len()
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	if n == 0 && !IsLoopback(addr) {
		return fmt.Errorf("gateway: refusing to listen on %s with %w (anyone reaching it could run code on this machine): "+
			"create one with `kernelgate keys create --scopes reward`, or listen on 127.0.0.1", addr, ErrNoKeys)
	}
	return nil
}
