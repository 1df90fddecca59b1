package gateway

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"
)

// Defaults of the serve flags --rate-limit and --rate-burst. A trainer
// usually sends a batch per request; 400 at once still lets a few hundred
// rollout workers that share one key post their first samples together.
const (
	DefaultRateLimit = 100 // requests per second per key
	DefaultRateBurst = 400
)

// limiter is a token bucket per API key name. In open mode (loopback, no
// keys) every caller is "" and so shares one bucket. Buckets are per
// process: with several gateways a key gets each one's rate.
type limiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// newLimiter returns nil (no limit) when perSecond is not positive; a burst
// below 1 becomes max(1, perSecond).
func newLimiter(perSecond float64, burst int, now func() time.Time) *limiter {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &limiter{rate: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*rate.Limiter{}}
}

// take takes a token from caller's bucket; when none is left it takes
// nothing and says how long until one is.
func (l *limiter) take(caller string) (ok bool, wait time.Duration) {
	l.mu.Lock()
	b := l.buckets[caller]
	if b == nil {
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[caller] = b
	}
	l.mu.Unlock()
	now := l.now()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// rateLimit answers 429 rate_limited, with Retry-After in whole seconds,
// to a caller whose bucket is empty. Open routes (health) are not limited.
func (s *Server) rateLimit(c *gin.Context) {
	caller, authed := c.Get(callerKey)
	if s.limiter == nil || !authed {
		c.Next()
		return
	}
	name, _ := caller.(string)
	if ok, wait := s.limiter.take(name); !ok {
		e := newError(CodeRateLimited, "", "rate limit of %g requests/s (burst %d) exceeded for %s; retry after %s",
			float64(s.limiter.rate), s.limiter.burst, callerName(name), wait.Round(time.Millisecond))
		e.retryAfter = max(1, int(math.Ceil(wait.Seconds())))
		abort(c, e)
		return
	}
	c.Next()
}

func callerName(name string) string {
	if name == "" {
		return "unauthenticated callers (they share one bucket)"
	}
	return "key " + strconv.Quote(name)
}
