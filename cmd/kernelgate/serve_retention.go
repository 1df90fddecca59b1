package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/bus"
)

// retentionFlags bound what serve keeps in its store (bus.Limits, README
// "Retention"): bytes per stream and bucket, ages, and the free space under
// which the data directory counts as full.
type retentionFlags struct {
	store, events, jobs, results, cache, buckets, minFree string
	eventMaxAge, resultTTL, cacheTTL                      time.Duration
}

func (f *retentionFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.store, "store-max-bytes", "", "bytes the NATS store may hold; the per-store defaults are shares of it (default: 3/4 of the data directory's free space plus what the store holds; 4GiB with --nats)")
	fl.StringVar(&f.events, "events-max-bytes", "", "bytes of events the Parquet sink has not written yet; past it new work gets 507 (default: 30% of --store-max-bytes)")
	fl.StringVar(&f.jobs, "jobs-max-bytes", "", "bytes of queued jobs; past it 429 queue_full (default: 10% of --store-max-bytes)")
	fl.StringVar(&f.results, "results-max-bytes", "", "bytes of batch records and results; past it new work gets 507 until older ones expire (default: 20% of --store-max-bytes)")
	fl.StringVar(&f.cache, "cache-max-bytes", "", "bytes of the result cache; past it the oldest entries go (default: 10% of --store-max-bytes)")
	fl.StringVar(&f.buckets, "bucket-max-bytes", "", "bytes of each other bucket: tasks, episodes, searches, idempotency keys, identical evaluations in flight (default: 3% of --store-max-bytes)")
	fl.StringVar(&f.minFree, "min-free", "", fmt.Sprintf("free space in --data under which writes get 507 and /readyz 503 (default %dMiB)", bus.DefaultMinFree>>20))
	fl.DurationVar(&f.eventMaxAge, "events-max-age", 0, "drop events the Parquet sink has not written after this long (default 0: never; written events leave at once)")
	fl.DurationVar(&f.resultTTL, "result-ttl", bus.DefaultResultTTL, "how long a batch's results stay readable")
	fl.DurationVar(&f.cacheTTL, "cache-ttl", bus.DefaultCacheTTL, "how long the result cache keeps a verdict")
}

// apply sets the bus options the flags decide.
func (f *retentionFlags) apply(o *bus.Options) error {
	for _, v := range []struct {
		flag, s string
		dst     *int64
	}{
		{"--store-max-bytes", f.store, &o.Limits.Store}, {"--events-max-bytes", f.events, &o.Limits.Events},
		{"--jobs-max-bytes", f.jobs, &o.Limits.Jobs}, {"--results-max-bytes", f.results, &o.Limits.Results},
		{"--cache-max-bytes", f.cache, &o.Limits.Cache}, {"--bucket-max-bytes", f.buckets, &o.Limits.Buckets},
		{"--min-free", f.minFree, &o.MinFree},
	} {
		if v.s == "" {
			continue
		}
		n, err := parseBytes(v.s)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", v.flag, err)}
		}
		*v.dst = n
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--events-max-age", f.eventMaxAge}, {"--result-ttl", f.resultTTL}, {"--cache-ttl", f.cacheTTL}} {
		if d.v < 0 {
			return usageError{fmt.Errorf("%s must not be negative, got %s", d.flag, d.v)}
		}
	}
	if f.resultTTL == 0 || f.cacheTTL == 0 {
		return usageError{fmt.Errorf("--result-ttl and --cache-ttl must be positive")}
	}
	o.EventMaxAge, o.ResultTTL, o.CacheTTL = f.eventMaxAge, f.resultTTL, f.cacheTTL
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// parseBytes reads a size: a number of bytes, or one with a unit (KiB, MiB,
// GiB, TiB, or KB, MB, GB, TB in powers of 1000).
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	num, mul := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mul = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mul
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n < 0 || n*float64(mul) > 1<<62 {
		return 0, fmt.Errorf("want a size such as 512MiB or 2GiB, got %q", s)
	}
	return int64(n * float64(mul)), nil
}
