// Package worker runs evaluation jobs from the bus: it pulls jobs.eval,
// evaluates each with the harness, scores it with the named reward function,
// logs the verdict on events.evaluation and notifies the waiting gateway on
// results.<batch_id> (a task check, which evaluates no candidate, is only
// announced). A job is acked only after both are published, so a
// worker that dies mid-job loses nothing: the job is redelivered.
//
// Job and Result are the wire types shared with the gateway, which imports
// this package for them. Imported by the gateway and cmd/kernelgate.
package worker
