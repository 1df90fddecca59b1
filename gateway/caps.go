package gateway

import (
	"encoding/json"

	"github.com/kernelgate/kernelgate/eval"
)

// DefaultMaxTimeoutS is Config.MaxTimeoutS's default (serve's --max-timeout-s).
const DefaultMaxTimeoutS = 600

// A cap is the most of one option a request may ask this server for. The
// message names serve's flag, which is where an operator raises it.
type optionCap struct {
	field, flag string
	value, max  int
}

func (c Config) caps(o eval.Options) []optionCap {
	return []optionCap{
		{"timeout_s", "--max-timeout-s", o.TimeoutS, c.MaxTimeoutS},
		{"memory_limit_mb", "--max-memory-mb", o.MemoryLimitMB, c.MaxMemoryMB},
	}
}

// defaultOptions are the options of a request that gives none: the harness
// defaults, lowered to the caps (memory_limit_mb is min(32768, the cap)).
func (c Config) defaultOptions() eval.Options {
	o := eval.DefaultOptions()
	if c.MaxTimeoutS > 0 {
		o.TimeoutS = min(o.TimeoutS, c.MaxTimeoutS)
	}
	if c.MaxMemoryMB > 0 {
		o.MemoryLimitMB = min(o.MemoryLimitMB, c.MaxMemoryMB)
	}
	return o
}

// parseOptions decodes an options field over the server's defaults,
// validates it (harness bounds: invalid_options) and holds it to the caps
// (option_above_cap). The result is canonical (require_triton true omitted).
func (c Config) parseOptions(raw json.RawMessage) (eval.Options, *apiError) {
	opts := c.defaultOptions()
	if len(raw) > 0 && string(raw) != "null" {
		if err := decodeStrict(raw, &opts); err != nil {
			return opts, newError(CodeInvalidOptions, "options"+dotted(jsonField(err)), "options: %v", err)
		}
	}
	if err := opts.Validate(); err != nil {
		msg, name := optionsError(err)
		return opts, newError(CodeInvalidOptions, "options"+dotted(name), "options: %s", msg)
	}
	for _, cp := range c.caps(opts) {
		if cp.max > 0 && cp.value > cp.max {
			return opts, newError(CodeOptionAboveCap, "options."+cp.field,
				"%s %d is above this server's cap of %d (%s)", cp.field, cp.value, cp.max, cp.flag)
		}
	}
	return opts.Canonical(), nil
}
