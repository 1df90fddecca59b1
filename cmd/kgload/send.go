package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// result is one request's outcome.
type result struct {
	latency         time.Duration
	queueMS, execMS *float64 // the verdict's; nil when absent (cached, shared, failed)
	status          int      // HTTP status; -1: no answer
	cached          bool
	verdicts        []string
}

// sender posts request i.
type sender struct {
	client        *http.Client
	url, key, ref string
	code          string
	distinct      bool
	start         time.Time
}

func newSender(c config, ref, code string, start time.Time) *sender {
	conns := c.concurrency
	if c.rate > 0 || c.burst {
		conns = c.n
	}
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	return &sender{client: &http.Client{Transport: tr, Timeout: 10 * time.Minute},
		url: c.url, key: c.key, ref: ref, code: code, distinct: c.distinct, start: start}
}

func (s *sender) post(i int) result {
	code := s.code
	if s.distinct {
		code += fmt.Sprintf("\n# request %d %d\n", i, s.start.UnixNano())
	}
	body, _ := json.Marshal(map[string]any{"reference": s.ref, "codes": []string{code}, "wait_s": 600})
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/rewards", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	t0 := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return result{latency: time.Since(t0), status: -1}
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := result{latency: time.Since(t0), status: resp.StatusCode}
	var out struct {
		Results []struct {
			Status      string   `json:"status"`
			QueueWaitMS *float64 `json:"queue_wait_ms"`
			ExecMS      *float64 `json:"exec_ms"`
		} `json:"results"`
		Cached []*bool `json:"cached"`
	}
	if json.Unmarshal(raw, &out) == nil && len(out.Results) == 1 && len(out.Cached) == 1 {
		v := out.Results[0]
		r.queueMS, r.execMS, r.cached = v.QueueWaitMS, v.ExecMS, out.Cached[0] != nil && *out.Cached[0]
		r.verdicts = []string{v.Status}
	}
	return r
}

// sendClosed: conc clients, each sending its next request when its last is
// answered, after a random pause of up to pause.
func sendClosed(n, conc int, pause time.Duration, post func(int) result) []result {
	results := make([]result, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if pause > 0 {
					time.Sleep(rand.N(pause))
				}
				results[i] = post(i)
			}
		})
	}
	wg.Wait()
	return results
}

// sendAtRate sends request i at i/rate s from the start, whatever the
// answers.
func sendAtRate(n int, rate float64, post func(int) result) []result {
	results := make([]result, n)
	every := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
		wg.Go(func() { results[i] = post(i) })
	}
	wg.Wait()
	return results
}

// sendBurst sends all n requests at once.
func sendBurst(n int, post func(int) result) []result {
	results := make([]result, n)
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-ready
			results[i] = post(i)
		})
	}
	close(ready)
	wg.Wait()
	return results
}
