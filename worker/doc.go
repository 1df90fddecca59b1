// Package worker runs evaluation jobs from the bus: it pulls jobs.interactive.<mode>
// first (a search's evaluations, queued by Queue) and then jobs.eval.<mode> (gpu or cpu: its own),
// evaluates each with the harness, scores it with the named reward function,
// logs the verdict on events.evaluation, stores the result in the bus's
// batches bucket and notifies the waiting gateway on results.<batch_id> (a
// task check, which evaluates no candidate, is stored and announced only). A
// job is acked only after all of these, so a worker that dies mid-job loses
// nothing: the job is redelivered. Deterministic verdicts also go into the
// result cache (cache.go, keyed by the work and the environment), which the
// gateway reads before queueing a job. Identical jobs in flight share one
// evaluation (share.go): the worker that runs it answers the others. Each
// worker process announces itself in the bus's workers bucket (presence.go),
// which a gateway without workers of its own reads for /readyz and the cache.
// A job whose options require an environment is queued on a subject naming
// it, and a worker pulls only the subjects its environments satisfy
// (route.go). A result the worker could not store is kept and sent again
// when its job comes back, not evaluated again (unsent.go). Queue evaluates
// through all this for a caller that waits on one job (a search step).
//
// Job and Result are the wire types shared with the gateway, which imports
// this package for them. Imported by the gateway and cmd/kernelgate.
package worker
