package gateway

import (
	"fmt"
	"math"
)

// The harness's absolute bounds on timeout_s and memory_limit_mb
// (eval.Options.Validate): a cap outside them could never be reached.
const (
	maxTimeoutS = 3600
	minMemoryMB = 64
)

// Validate reports the first field out of range. Zero values are valid (they
// take the defaults, or switch a feature off: see Config).
func (c Config) Validate() error {
	switch {
	case c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0):
		return fmt.Errorf("rate limit %g: want a finite number of requests/s, 0 for no limit", c.RateLimit)
	case c.RateBurst < 0:
		return fmt.Errorf("rate burst %d: want 0 or more", c.RateBurst)
	case c.DrainDelay < 0:
		return fmt.Errorf("drain delay %s: want 0 or more", c.DrainDelay)
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("shutdown timeout %s: want 0 or more", c.ShutdownTimeout)
	case c.MaxBodyBytes < 0 || c.MaxItems < 0 || c.DefaultWait < 0:
		return fmt.Errorf("max body bytes, max items and default wait must be 0 or more")
	case c.MaxTimeoutS < 0 || c.MaxTimeoutS > maxTimeoutS:
		return fmt.Errorf("max timeout %d s: want 1..%d (eval.Options' bound), 0 for the default %d", c.MaxTimeoutS, maxTimeoutS, DefaultMaxTimeoutS)
	case c.MaxMemoryMB < 0 || (c.MaxMemoryMB > 0 && c.MaxMemoryMB < minMemoryMB):
		return fmt.Errorf("max memory %d MiB: want %d or more (eval.Options' bound), 0 for no cap", c.MaxMemoryMB, minMemoryMB)
	}
	return c.Doors.validate()
}
