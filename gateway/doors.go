package gateway

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Doors says who may knock, beside API keys (auth.go). A loopback gateway
// is reachable from every web page the machine's browser opens: a page can
// POST to http://127.0.0.1:8080 (CSRF) or point a name it controls at
// 127.0.0.1 (DNS rebinding). Browsers always send Origin on such requests,
// the Host they send is the page's name, and a cross-site POST without a
// CORS preflight can only carry text/plain, form or multipart bodies; the
// checks below refuse all three.
type Doors struct {
	// Open lets callers without a key in while the listener is loopback and
	// DATA/keys.json does not exist (serve --open). Without it such a server
	// answers 401 naming the two ways out. Once keys.json exists, keys are
	// required whatever Open says: an empty file lets nobody in.
	Open bool
	// AllowedHosts are the names a loopback gateway answers to, in Host and
	// in Origin, any port (serve --allowed-hosts); nil: DefaultAllowedHosts.
	// "*" turns both checks off. Beyond loopback neither is checked: a key
	// is required there, and a browser cannot send one cross-site.
	AllowedHosts []string
	// AuthFailLimit failed authentications under one key prefix, or from
	// one source address, within a sliding AuthFailWindow, then 429 for
	// further failures (a valid key always passes: authfail.go);
	// AuthFailLimit 0: DefaultAuthFailLimit, negative: no limit.
	AuthFailLimit  int
	AuthFailWindow time.Duration // 0: DefaultAuthFailWindow
}

// Defaults of Doors (serve's flags).
const (
	DefaultAuthFailLimit  = 20
	DefaultAuthFailWindow = time.Minute
)

// DefaultAllowedHosts are the loopback names: what a local client sends.
var DefaultAllowedHosts = []string{"localhost", "127.0.0.1", "::1"}

func (d Doors) withDefaults() Doors {
	if d.AllowedHosts == nil {
		d.AllowedHosts = DefaultAllowedHosts
	}
	if d.AuthFailLimit == 0 {
		d.AuthFailLimit = DefaultAuthFailLimit
	}
	if d.AuthFailWindow <= 0 {
		d.AuthFailWindow = DefaultAuthFailWindow
	}
	return d
}

func (d Doors) validate() error {
	if d.AllowedHosts != nil && len(d.AllowedHosts) == 0 {
		return fmt.Errorf("allowed hosts: an empty list would refuse every request on loopback; give names, or \"*\" for any")
	}
	for _, h := range d.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return fmt.Errorf("allowed host %q: want a host name or IP without scheme or path (\"*\" for any)", h)
		}
	}
	if d.AuthFailWindow < 0 {
		return fmt.Errorf("auth failure window %s: want 0 or more", d.AuthFailWindow)
	}
	return nil
}

// CheckOpen refuses --open beyond loopback: a caller there may be anyone.
func CheckOpen(addr string, d Doors) error {
	if d.Open && !IsLoopback(addr) {
		return fmt.Errorf("gateway: --open serves callers without a key, which only a loopback --addr may do (got %s): "+
			"create a key with `kernelgate keys create --scopes reward` instead", addr)
	}
	return nil
}

// hostAllowed reports whether host (a Host header or an Origin's host,
// with or without a port) is one of allowed.
func hostAllowed(host string, allowed []string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(strings.Trim(a, "[]"), host) {
			return true
		}
	}
	return false
}

// checkDoors is the first middleware: on loopback it refuses a foreign Host
// or Origin (403 forbidden) before anything else runs.
func (s *Server) checkDoors(c *gin.Context) {
	if s.requireKeys.Load() { // beyond loopback: keys decide
		c.Next()
		return
	}
	allowed := s.cfg.Doors.AllowedHosts
	if !hostAllowed(c.Request.Host, allowed) {
		abort(c, newError(CodeForbidden, "", "Host %q is not one this loopback gateway answers to (%s): a web page may be "+
			"reaching it through DNS rebinding; add the name with serve --allowed-hosts if it is yours",
			c.Request.Host, strings.Join(allowed, ", ")))
		return
	}
	if origin := c.GetHeader("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !hostAllowed(u.Host, allowed) {
			abort(c, newError(CodeForbidden, "", "Origin %q is not one this loopback gateway answers to (%s): "+
				"web pages may not drive it; add the name with serve --allowed-hosts if it is yours",
				origin, strings.Join(allowed, ", ")))
			return
		}
	}
	c.Next()
}

// requireJSON answers 415 to a POST, PUT or PATCH whose body is not
// declared application/json: the bodies a web page can send cross-site
// without a preflight (text/plain, forms) never reach a handler. A request
// without a body (POST .../cancel) needs no Content-Type.
func (s *Server) requireJSON(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		c.Next()
		return
	}
	if c.Request.ContentLength == 0 {
		c.Next()
		return
	}
	ct := c.GetHeader("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		abort(c, newError(CodeUnsupportedMediaType, "", "Content-Type %q: request bodies must be JSON, sent with "+
			"Content-Type: application/json (with curl: -H 'Content-Type: application/json')", ct))
		return
	}
	c.Next()
}
