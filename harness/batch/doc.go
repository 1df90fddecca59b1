// Package batch runs many evaluations through a harness Supervisor (or any
// Evaluator) with bounded concurrency and summarises them as a Report:
// throughput, latency, stage breakdown, status counts and one row per
// evaluation, as text or JSON. Used by `kernelgate bench`.
package batch
