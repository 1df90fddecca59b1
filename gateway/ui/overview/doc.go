// Package overview turns what a gateway serves (its /metrics text and its
// /v1/gpus answer) into one Snapshot: queue, workers, GPUs, verdict counts
// and latency quantiles. The dashboard (gateway/ui) and `kernelgate top`
// both read it, so the browser and the terminal show the same numbers.
//
// It imports nothing of kernelgate and no HTTP: callers fetch, it parses.
package overview
