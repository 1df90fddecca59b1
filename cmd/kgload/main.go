// Command kgload drives a running `kernelgate serve` with POST /v1/rewards
// requests, one code each, and reports throughput and where a request's
// time went, p50 and p99: the round trip, the verdict's queue_wait_ms (from
// queueing to the evaluation's start on a worker), its exec_ms (the
// harness's own time) and the gateway's overhead (round trip - queue wait -
// exec: the HTTP request, queueing, the result's store and notification).
//
//	go run ./cmd/kgload --task datasets/ci/1_add_relu.py --kernel datasets/solutions/ci/1_add_relu.py \
//	    --n 200 --concurrency 1 --distinct
//
// Three ways to send:
//
//   - closed loop (the default): --concurrency clients, each sending its
//     next request when the last is answered; --concurrency 1 is one at a
//     time, as a trainer that waits for each reward. --pause D makes each
//     client wait a random 0..D before each request, so a worker is idle
//     for a while between jobs.
//   - steady rate: --rate R sends a request every 1/R s whatever the
//     answers (open loop, so a slow gateway shows up as queue wait).
//   - burst: --burst sends all --n at once.
//
// Flags: --url (default http://127.0.0.1:8080), --task and --kernel (files,
// required), --n requests (default 100), --concurrency, --pause, --rate,
// --burst, --distinct, --key (default $KERNELGATE_API_KEY).
//
// --distinct makes every request's code unique (a trailing comment), so none is
// answered from the result cache; without it every request after the first is a
// cache hit, which is how cached-reward throughput is measured (start serve
// with --rate-limit 0: the default limit is per key, and loopback callers
// without keys share one bucket). A cached answer has no queue wait or exec
// time: only uncached ones count in those figures.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// config is one run's flags.
type config struct {
	url, task, kernel, key string
	n, concurrency         int
	pause                  time.Duration
	rate                   float64
	burst, distinct        bool
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "gateway base URL")
	flag.StringVar(&c.task, "task", "", "KernelBench-format task file (sent inline as reference)")
	flag.StringVar(&c.kernel, "kernel", "", "candidate file (sent as code)")
	flag.IntVar(&c.n, "n", 100, "requests")
	flag.IntVar(&c.concurrency, "concurrency", 1, "closed loop: clients, each with one request in flight")
	flag.DurationVar(&c.pause, "pause", 0, "closed loop: each client waits a random 0..pause before each request")
	flag.Float64Var(&c.rate, "rate", 0, "steady rate: requests per second, sent whatever the answers")
	flag.BoolVar(&c.burst, "burst", false, "burst: send all --n requests at once")
	flag.BoolVar(&c.distinct, "distinct", false, "make every request's code unique (no cache hits)")
	flag.StringVar(&c.key, "key", os.Getenv("KERNELGATE_API_KEY"), "API key")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := c.validate(set); err != nil {
		fmt.Fprintln(os.Stderr, "kgload:", err)
		os.Exit(2)
	}
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kgload:", err)
		os.Exit(1)
	}
}

// validate checks c; set names the flags given, to refuse those that do
// nothing in the chosen mode.
func (c config) validate(set map[string]bool) error {
	switch {
	case c.task == "" || c.kernel == "":
		return fmt.Errorf("--task and --kernel are required")
	case c.n < 1 || c.concurrency < 1:
		return fmt.Errorf("--n and --concurrency must be at least 1")
	case c.pause < 0 || c.rate < 0:
		return fmt.Errorf("--pause and --rate must not be negative")
	case c.rate > 0 && c.burst:
		return fmt.Errorf("--rate and --burst are two modes: give one")
	case (c.rate > 0 || c.burst) && (set["concurrency"] || set["pause"]):
		return fmt.Errorf("--concurrency and --pause are for the closed loop, not --rate or --burst")
	}
	return nil
}

// mode says how c sends, for the report.
func (c config) mode() string {
	switch {
	case c.rate > 0:
		return fmt.Sprintf("steady rate %g req/s", c.rate)
	case c.burst:
		return fmt.Sprintf("burst of %d", c.n)
	case c.concurrency == 1 && c.pause > 0:
		return fmt.Sprintf("one at a time, random pauses up to %s", c.pause)
	case c.concurrency == 1:
		return "one at a time"
	case c.pause > 0:
		return fmt.Sprintf("closed loop, %d in flight, random pauses up to %s", c.concurrency, c.pause)
	}
	return fmt.Sprintf("closed loop, %d in flight", c.concurrency)
}

func run(c config, out io.Writer) error {
	ref, err := os.ReadFile(c.task)
	if err != nil {
		return err
	}
	code, err := os.ReadFile(c.kernel)
	if err != nil {
		return err
	}
	start := time.Now()
	s := newSender(c, string(ref), string(code), start)
	var results []result
	switch {
	case c.rate > 0:
		results = sendAtRate(c.n, c.rate, s.post)
	case c.burst:
		results = sendBurst(c.n, s.post)
	default:
		results = sendClosed(c.n, c.concurrency, c.pause, s.post)
	}
	return report(out, c.mode(), results, time.Since(start))
}
