// Package overview turns what a gateway serves (its /metrics text and its
// /v1/gpus answer) into one Snapshot: queue, workers, GPUs, verdict counts
// and latency quantiles. The dashboard (gateway/ui) and `kernelgate top`
// both read it, so the browser and the terminal show the same numbers.
//
// It imports nothing of kernelgate. The dashboard reads the gateway in
// process and hands the bodies to FromMetrics and AddGPUs; Fetch reads them
// over HTTP for the terminal; WriteText draws a terminal frame.
package overview
