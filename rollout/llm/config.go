package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config configures a Client. Zero fields take the defaults noted.
type Config struct {
	// BaseURL is the OpenAI-compatible API root including its version,
	// e.g. "http://localhost:8000/v1" (vLLM, SGLang) or
	// "https://api.openai.com/v1".
	BaseURL string
	Model   string
	APIKey  string // may be empty (local servers); no Authorization header then

	Temperature *float64      // default 0.7; a Request's own wins
	MaxTokens   int           // default 4096; a Request's own wins
	Timeout     time.Duration // per HTTP attempt; default 120 s
	// Retries after the first attempt on network errors, timeouts, 429 and
	// 5xx; default 3, negative for none.
	Retries int
	// Concurrency is the most calls in flight at once; default 8.
	Concurrency int

	// Backoff before retry n (from 0) is BackoffBase·2ⁿ capped at BackoffMax
	// (defaults 500 ms and 10 s), half of it jittered. A Retry-After header
	// replaces it, capped at RetryAfterMax (default 60 s) so that a server
	// asking for an hour does not stall a search silently.
	BackoffBase, BackoffMax, RetryAfterMax time.Duration
}

// Defaults.
const (
	DefaultTemperature   = 0.7
	DefaultMaxTokens     = 4096
	DefaultTimeout       = 120 * time.Second
	DefaultRetries       = 3
	DefaultConcurrency   = 8
	DefaultBackoffBase   = 500 * time.Millisecond
	DefaultBackoffMax    = 10 * time.Second
	DefaultRetryAfterMax = 60 * time.Second
)

// Validate reports what is missing or malformed.
func (c Config) Validate() error {
	var errs []error
	u, err := url.Parse(c.BaseURL)
	if c.BaseURL == "" {
		errs = append(errs, errors.New("base URL is empty"))
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base URL %q is not an http(s) URL", c.BaseURL))
	}
	if c.Model == "" {
		errs = append(errs, errors.New("model is empty"))
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2) {
		errs = append(errs, fmt.Errorf("temperature %g is outside [0, 2]", *c.Temperature))
	}
	if c.MaxTokens < 0 || c.Timeout < 0 || c.Concurrency < 0 {
		errs = append(errs, errors.New("max tokens, timeout and concurrency must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("llm config: %w", err)
	}
	return nil
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Temperature == nil {
		t := DefaultTemperature
		c.Temperature = &t
	}
	c.MaxTokens = or(c.MaxTokens, DefaultMaxTokens)
	c.Timeout = or(c.Timeout, DefaultTimeout)
	c.Concurrency = or(c.Concurrency, DefaultConcurrency)
	c.BackoffBase = or(c.BackoffBase, DefaultBackoffBase)
	c.BackoffMax = or(c.BackoffMax, DefaultBackoffMax)
	c.RetryAfterMax = or(c.RetryAfterMax, DefaultRetryAfterMax)
	switch {
	case c.Retries == 0:
		c.Retries = DefaultRetries
	case c.Retries < 0:
		c.Retries = 0
	}
	return c
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
