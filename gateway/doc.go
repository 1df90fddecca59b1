// Package gateway is kernelgate's HTTP API (openapi.yaml): health, readiness,
// POST /v1/rewards, which hands the batch to the evaluation service
// (dispatch.Service: one job per distinct piece of work, the rest answered
// from the result cache or an identical evaluation in flight) and answers
// the verdicts in request order, or 202 when wait_s runs out;
// GET /v1/batches/{id} and its NDJSON stream, which follow its results, and
// its items' code, read from the Parquet log (batch_code.go);
// /v1/evaluations, a batch of one; on top of that path the task registry
// (tasks.go, taskchecks.go: checks through dispatch.Service.CheckTask), multi-turn episodes (episodes.go) and OpenRLHF's
// remote reward model shape (openrlhf.go); GET /v1/gpus and /metrics for
// operators. Every route passes API-key auth (auth.go: the route → scope
// table) and a per-key rate limit (ratelimit.go); every options field is held
// to the server's caps on timeout_s and memory_limit_mb (caps.go). It is the only package
// that imports gin. It builds no queue message: jobs, subjects and results
// are dispatch's. Every error answer comes from the table in errors.go.
//
// Imported by stack (which assembles serve) and cmd/kernelgate.
package gateway
