package gateway

import (
	"math"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	for name, tt := range map[string]struct {
		cfg Config
		ok  bool
	}{
		"zero":             {Config{}, true},
		"serve defaults":   {Config{RateLimit: DefaultRateLimit, RateBurst: DefaultRateBurst, ShutdownTimeout: DefaultShutdownTimeout}, true},
		"negative rate":    {Config{RateLimit: -1}, false},
		"NaN rate":         {Config{RateLimit: math.NaN()}, false},
		"infinite rate":    {Config{RateLimit: math.Inf(1)}, false},
		"negative burst":   {Config{RateBurst: -1}, false},
		"negative drain":   {Config{DrainDelay: -time.Second}, false},
		"negative timeout": {Config{ShutdownTimeout: -time.Second}, false},
		"negative body":    {Config{MaxBodyBytes: -1}, false},
	} {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: %v", name, err)
		}
	}
}
