// Package worker runs evaluation jobs from the bus: it pulls
// jobs.interactive.<mode> first (a search's evaluations) and then
// jobs.eval.<mode> (gpu or cpu: its own), and of each only the subjects its
// environments satisfy. A free slot does not poll: it is woken when a job
// is queued on one of those subjects, from this host or another, and
// starts it within milliseconds (bus.PrioritizedJobs); the time from
// queueing to the start is the verdict's queue_wait_ms. It evaluates each
// job with the harness, scores it with the named reward function, and
// answers through dispatch.PublishResult (logged on events.evaluation,
// stored, announced on results.<batch_id>; a task check is stored and
// announced only). A job is acked only after all of
// these, so a worker that dies mid-job loses nothing: the job is
// redelivered. Deterministic verdicts also go into the result cache. Of
// identical jobs in flight one runs (dispatch.Claim) and answers the others
// (dispatch.Drain). A result the worker could not store is kept and sent
// again when its job comes back, not evaluated again (unsent.go). Each
// worker process announces itself in the bus's workers bucket (presence.go),
// which a gateway without workers of its own reads for /readyz and the
// cache.
//
// The job queue's protocol (Job, Result, subjects, sharing, cache keys) is
// package dispatch's; this package is its pulling end. Imported by
// stack (serve and `kernelgate worker`).
package worker
