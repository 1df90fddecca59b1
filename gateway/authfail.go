package gateway

import (
	"net"
	"sync"
	"time"
)

// maxFailAddrs bounds the addresses authFails remembers; past it, every new
// address shares one entry, so a flood from many addresses costs memory no
// more than this and is still limited.
const maxFailAddrs = 65536

// authFails counts failed authentications per source address in fixed
// windows: after limit failures an address is refused (429, before its key
// is even looked at) until its window ends. Keys are 260 random bits, so
// this is not what keeps them secret: it keeps a guessing client from
// filling the log and the CPU. Behind a local reverse proxy every caller
// is one address; such a proxy should limit per client itself.
type authFails struct {
	limit  int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	addrs map[string]*failWindow
}

type failWindow struct {
	start time.Time
	n     int
}

// newAuthFails returns nil (no limit) when limit is negative.
func newAuthFails(limit int, window time.Duration, now func() time.Time) *authFails {
	if limit < 0 {
		return nil
	}
	return &authFails{limit: limit, window: window, now: now, addrs: map[string]*failWindow{}}
}

// blocked says how long addr must wait before it may try a key again; 0:
// it may now.
func (a *authFails) blocked(addr string) time.Duration {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.entry(addrKey(addr))
	if w == nil || w.n < a.limit {
		return 0
	}
	if left := w.start.Add(a.window).Sub(a.now()); left > 0 {
		return left
	}
	return 0
}

// failed counts one failed authentication of addr.
func (a *authFails) failed(addr string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	k := addrKey(addr)
	if _, ok := a.addrs[k]; !ok && len(a.addrs) >= maxFailAddrs {
		a.prune(now)
		if len(a.addrs) >= maxFailAddrs {
			k = overflowKey
		}
	}
	w := a.addrs[k]
	if w == nil || now.Sub(w.start) >= a.window {
		w = &failWindow{start: now}
		a.addrs[k] = w
	}
	w.n++
}

// overflowKey is the entry every new address shares while the map is full.
const overflowKey = "overflow"

// entry is k's window, or the shared one when k has none and the map is full.
func (a *authFails) entry(k string) *failWindow {
	if w := a.addrs[k]; w != nil {
		return w
	}
	if len(a.addrs) >= maxFailAddrs {
		return a.addrs[overflowKey]
	}
	return nil
}

// prune drops the windows that have ended.
func (a *authFails) prune(now time.Time) {
	for k, w := range a.addrs {
		if now.Sub(w.start) >= a.window {
			delete(a.addrs, k)
		}
	}
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
