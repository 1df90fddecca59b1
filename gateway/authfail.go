package gateway

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/gateway/apikey"
)

// maxFailAddrs and maxFailPrefixes bound the counters authFails keeps
// (failwindow.go says what happens past them).
const (
	maxFailAddrs    = 65536
	maxFailPrefixes = 65536
)

// credPrefixLen is how much of a presented credential its failures are
// counted under: for a well-formed key, the hint `kernelgate keys list`
// shows (apikey.Key.Hint). A key has no id apart from its secret, and the
// hint is the part that names one key without giving away the 226 bits
// after it; a guesser aiming at a key it has seen listed keeps it fixed.
const credPrefixLen = len(apikey.Prefix) + 6

// authFails limits failed authentications, and only them: a valid key is
// looked up first and never meets these counters, so no other client's
// failures can lock it out. A failure is counted in a sliding window under
// the prefix of the credential it presented and under its source address
// (IPv6: its /64); it is refused with 429 instead of 401 while either
// count has reached the limit. The prefix limits guessing at one key from
// many addresses; the address limits one address guessing many keys, and
// requests that present no key at all. On a loopback gateway every local
// process is one address, so a failer there can turn a neighbour's 401
// into 429, never its 200.
//
// A valid key is let in even from a client past the limit, so the limit
// does not stop a correct guess: 256 random bits do. It tells a guessing or
// misconfigured client to back off (Retry-After) and makes it visible in
// the log. Refused failures count too: a client that keeps failing stays
// refused until it has been quiet long enough.
type authFails struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu       sync.Mutex
	addrs    failTally
	prefixes failTally
}

// newAuthFails returns nil (no limit) when limit is negative.
func newAuthFails(limit int, window time.Duration, now func() time.Time) *authFails {
	if limit < 0 {
		return nil
	}
	return &authFails{limit: limit, window: window, now: now,
		addrs:    failTally{max: maxFailAddrs, counts: map[string]*slidingCount{}},
		prefixes: failTally{max: maxFailPrefixes, counts: map[string]*slidingCount{}},
	}
}

// failVerdict is what one failed authentication earns.
type failVerdict struct {
	wait    time.Duration // > 0: refuse with 429 for this long
	by      string        // the counter past the limit, for the message
	reached bool          // this failure brought a counter to the limit
}

// fail counts a failed authentication from addr that presented credential
// ("" when none).
func (a *authFails) fail(addr, credential string) failVerdict {
	if a == nil {
		return failVerdict{}
	}
	width := max(a.window/failBuckets, 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	tick := tickOf(now, width)
	var v failVerdict
	count := func(t *failTally, key, by string) {
		s, before := t.add(key, tick)
		v.reached = v.reached || before+1 == a.limit
		if before < a.limit {
			return
		}
		if wait := time.Duration(s.untilBelow(a.limit)*int64(width) - now.UnixNano()); wait > v.wait {
			v.wait, v.by = wait, by
		}
	}
	count(&a.addrs, addrKey(addr), "from "+addr)
	if credential != "" {
		p := credPrefix(credential)
		count(&a.prefixes, p, fmt.Sprintf("with keys starting %q", p))
	}
	return v
}

// refuseFailed answers a failed authentication: aerr (401), or 429 with
// aerr's reason once the failer is past the limit.
func (s *Server) refuseFailed(c *gin.Context, aerr *apiError) {
	addr := c.RemoteIP()
	cred := presented(c.Request.Header)
	v := s.authFails.fail(addr, cred)
	if v.reached {
		s.log.Warn("failed authentications reached the limit; further failures get 429",
			"addr", addr, "key_prefix", credPrefix(cred), "limit", s.authFails.limit, "window", s.authFails.window)
	}
	if v.wait > 0 {
		e := newError(CodeRateLimited, "", "%s; %d failed authentications %s within %s: retry after %s",
			aerr.Message, s.authFails.limit, v.by, s.authFails.window, v.wait.Round(time.Second))
		e.retryAfter = max(1, int(math.Ceil(v.wait.Seconds())))
		abort(c, e)
		return
	}
	c.Header("WWW-Authenticate", `Bearer realm="kernelgate"`)
	abort(c, aerr)
}

// presented is the credential of an Authorization header, well-formed or
// not: what follows its scheme; "" when there is none.
func presented(h http.Header) string {
	_, cred, _ := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	return strings.TrimSpace(cred)
}

func credPrefix(credential string) string {
	if len(credential) > credPrefixLen {
		return credential[:credPrefixLen]
	}
	return credential
}

// addrKey is the key an address is counted under: the IP, with IPv6
// addresses grouped by /64 (one host usually holds a whole /64).
func addrKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil || ip.To4() != nil {
		return addr
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
