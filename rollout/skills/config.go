package skills

import (
	"fmt"
	"time"
)

// Config tunes the memory; zero values take the documented defaults.
type Config struct {
	// Threshold is how many failures with one signature make a rule
	// (default 3, DESIGN.md "rule threshold 3").
	Threshold int
	// OnOffMin is how many evaluations each arm of the on/off comparison
	// needs before it can retire a rule (default 20).
	OnOffMin int
	// OnOffMargin is how much lower (absolute) the pass rate with a rule must
	// be than without it to retire the rule (default 0.1).
	OnOffMargin float64
	// Triton is the toolchain retrieval prefers (rules recorded under another
	// triton major.minor rank after). Empty: the last observed verdict's.
	Triton string
	// OnChange receives every new rule version with its reason (Reason*),
	// in version order. It may call Memory's read methods, not the ones
	// that change rules.
	OnChange func(r Rule, reason string)
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Validate rejects negative settings.
func (c Config) Validate() error {
	if c.Threshold < 0 || c.OnOffMin < 0 || c.OnOffMargin < 0 || c.OnOffMargin > 1 {
		return fmt.Errorf("skills.Config: threshold %d, on/off min %d and margin %g must be >= 0 (margin <= 1)",
			c.Threshold, c.OnOffMin, c.OnOffMargin)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Threshold <= 0 {
		c.Threshold = 3
	}
	if c.OnOffMin <= 0 {
		c.OnOffMin = 20
	}
	if c.OnOffMargin <= 0 || c.OnOffMargin > 1 {
		c.OnOffMargin = 0.1
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
