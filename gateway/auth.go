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
	{path: "/v1/tasks", scope: apikey.Admin},       // registering or changing tasks
	{path: "/v1/task-checks", scope: apikey.Admin}, // a registration's check
	{path: "/v1/redteam", scope: apikey.Admin},     // attacks the harness with generated reward hacks
	{path: "/v1/searches", scope: apikey.Search},
	{method: http.MethodGet, path: "/v1/skills", scope: apikey.Search},
	{path: "/v1/skills", scope: apikey.Admin}, // retiring a rule changes every later search
	{path: "/v1/exports", scope: apikey.Export},
	{path: "/v1/gpus", scope: apikey.Admin},
	{path: "/metrics", scope: apikey.Admin},
	{path: "/v1/stats", scope: apikey.Admin},        // what /metrics cannot hold as labels (the slowest tasks)
	{path: "/ui", open: true},                       // the dashboard: pages without data; their reads use the caller's key (gateway/ui)
	{method: http.MethodGet, path: "/", open: true}, // a redirect to the dashboard
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
// Keys are enforced when the server listens beyond loopback, and on
// loopback too unless it was started with --open (Doors.Open) and has no
// key file: behind a reverse proxy every request comes from loopback, so the
// caller's address proves nothing. Once DATA/keys.json exists, keys are
// required even when it holds none (the last one revoked): nobody gets in.
// Open mode serves everything, /metrics and /v1/gpus included, to anyone
// who can reach the port, which is only this machine. A nil Keyring (tests,
// embedding) on loopback is open mode too: serve always passes one.
//
// The key is looked up before any limit on failures applies, so a valid key
// is never refused for other clients' failures; a failure past the limit
// gets 429 instead of 401 (authfail.go). A path that matches no route needs a
// valid key of any scope before it is told 404, so that unauthenticated
// callers learn nothing of the API.
func (s *Server) authenticate(c *gin.Context) {
	rule, known := scopeFor(c.Request.Method, c.FullPath())
	switch {
	case rule.open:
		c.Next()
		return
	case !known && c.FullPath() != "":
		rule.scope = apikey.Admin // a route missing from routeScopes
	}
	n, exists, err := s.deps.Keys.Count()
	if err != nil {
		s.log.Error("API keys cannot be read; refusing every request that needs one", "err", err)
		abort(c, newError(CodeInternal, "", "the server's API key file cannot be read; see its log"))
		return
	}
	if !exists && !s.requireKeys.Load() && (s.deps.Keys == nil || s.cfg.Doors.Open) {
		c.Set(callerKey, "")
		c.Next()
		return
	}
	var secret string
	aerr := s.noKeys(n, exists)
	if aerr == nil {
		secret, aerr = bearer(c.Request.Header)
	}
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
	s.refuseFailed(c, aerr)
}

// noKeys is the 401 of a server that requires keys and holds none (n is
// the number of keys, exists whether the key file does); nil when it holds
// some.
func (s *Server) noKeys(n int, exists bool) *apiError {
	switch {
	case n == 0 && exists:
		return newError(CodeUnauthorized, "", "every API key of this server has been revoked (its keys.json holds none), "+
			"so nobody is let in: create one with `kernelgate keys create --scopes reward` (it works at once)")
	case n == 0 && !s.requireKeys.Load():
		return newError(CodeUnauthorized, "", "this server has no API key and was not started with --open: create one "+
			"with `kernelgate keys create --scopes reward` (it works at once, no restart), or restart it with "+
			"`kernelgate serve --open` to let callers on this machine in without a key")
	case n == 0:
		return newError(CodeUnauthorized, "", "this server requires an API key and has none: create one with `kernelgate keys create`")
	}
	return nil
}

// bearer extracts the key of an "Authorization: Bearer <key>" header.
func bearer(h http.Header) (string, *apiError) {
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
