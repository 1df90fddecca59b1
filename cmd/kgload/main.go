// Command kgload drives a running `kernelgate serve` with POST /v1/rewards
// requests and reports throughput, latency and the gateway's overhead: the
// client's round trip minus the harness's own time (the verdict's exec_ms).
//
//	go run ./cmd/kgload --task datasets/ci/1_add_relu.py --kernel datasets/solutions/ci/1_add_relu.py \
//	    --n 200 --concurrency 1 --distinct
//
// --distinct makes every request's code unique (a trailing comment), so none is
// answered from the result cache; without it every request after the first is a
// cache hit, which is how cached-reward throughput is measured (start serve
// with --rate-limit 0: the default limit is per key, and loopback callers
// without keys share one bucket).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

type result struct {
	latency  time.Duration
	execMS   *float64
	status   int
	cached   bool
	verdicts []string
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "gateway base URL")
	task := flag.String("task", "", "KernelBench-format task file (sent inline as reference)")
	kernel := flag.String("kernel", "", "candidate file (sent as code)")
	n := flag.Int("n", 100, "requests")
	conc := flag.Int("concurrency", 1, "requests in flight")
	distinct := flag.Bool("distinct", false, "make every request's code unique (no cache hits)")
	key := flag.String("key", os.Getenv("KERNELGATE_API_KEY"), "API key")
	flag.Parse()
	if err := run(*url, *task, *kernel, *key, *n, *conc, *distinct); err != nil {
		fmt.Fprintln(os.Stderr, "kgload:", err)
		os.Exit(1)
	}
}

func run(url, taskPath, kernelPath, key string, n, conc int, distinct bool) error {
	if taskPath == "" || kernelPath == "" || n < 1 || conc < 1 {
		return fmt.Errorf("--task, --kernel, --n >= 1 and --concurrency >= 1 are required")
	}
	ref, err := os.ReadFile(taskPath)
	if err != nil {
		return err
	}
	code, err := os.ReadFile(kernelPath)
	if err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: conc}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Minute}
	results := make([]result, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c := string(code)
				if distinct {
					c += fmt.Sprintf("\n# request %d %d\n", i, start.UnixNano())
				}
				results[i] = post(client, url, key, string(ref), c)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	report(results, wall)
	return nil
}

func post(client *http.Client, url, key, ref, code string) result {
	body, _ := json.Marshal(map[string]any{"reference": ref, "codes": []string{code}, "wait_s": 600})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/rewards", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return result{latency: time.Since(t0), status: -1}
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := result{latency: time.Since(t0), status: resp.StatusCode}
	var out struct {
		Results []struct {
			Status string   `json:"status"`
			ExecMS *float64 `json:"exec_ms"`
		} `json:"results"`
		Cached []*bool `json:"cached"`
	}
	if json.Unmarshal(raw, &out) == nil && len(out.Results) == 1 && len(out.Cached) == 1 {
		r.execMS, r.cached = out.Results[0].ExecMS, out.Cached[0] != nil && *out.Cached[0]
		r.verdicts = []string{out.Results[0].Status}
	}
	return r
}

func report(rs []result, wall time.Duration) {
	var lat, over []float64
	codes, statuses, cached := map[int]int{}, map[string]int{}, 0
	for _, r := range rs {
		codes[r.status]++
		for _, s := range r.verdicts {
			statuses[s]++
		}
		if r.cached {
			cached++
		}
		ms := float64(r.latency.Microseconds()) / 1e3
		lat = append(lat, ms)
		if r.execMS != nil && !r.cached {
			over = append(over, ms-*r.execMS)
		}
	}
	fmt.Printf("requests %d in %.2f s: %.1f req/s; HTTP %v; verdicts %v; cached %d\n",
		len(rs), wall.Seconds(), float64(len(rs))/wall.Seconds(), codes, statuses, cached)
	fmt.Printf("latency ms: p50 %.2f p99 %.2f\n", q(lat, 0.5), q(lat, 0.99))
	if len(over) > 0 {
		fmt.Printf("gateway overhead ms (round trip - exec_ms), %d uncached: p50 %.2f p99 %.2f\n",
			len(over), q(over, 0.5), q(over, 0.99))
	}
}

func q(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(int(p*float64(len(s)-1)+0.5), len(s)-1)]
}
