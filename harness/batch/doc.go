// Package batch runs many evaluations through a harness Supervisor (or any
// Evaluator) with bounded concurrency and summarises them as a Report:
// throughput, latency, stage breakdown, status counts and one row per
// evaluation, as text or JSON; and RunFidelity, which benches the same items
// at full concurrency and at concurrency 1 and compares each kernel's median
// speedup (Fidelity). Used by `kernelgate bench` and `bench --fidelity`.
package batch
