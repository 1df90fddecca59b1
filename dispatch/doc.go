// Package dispatch is the evaluation service: it owns the job queue on the
// bus, both ends of it. Everyone who wants evaluations reaches it through
// Service: the gateway's reward batches (Submit, Follow, Record, Results),
// task checks (CheckTask), episodes through the gateway, and the search
// runner (EvaluateCached, through the result cache and ahead of bulk batches
// on jobs.interactive.<mode>). The worker package is the other end: it pulls
// jobs, runs them with the harness and answers through PublishResult, Claim
// and Drain. Local is the cache in front of an in-process harness, for the
// commands that run searches without a queue (search, adapt).
//
// What travels: Job and Result (job.go), on subjects that name the timing
// mode and any environment a job requires (route.go); results are stored in
// the bus's batches bucket and then announced on results.<batch_id>
// (result.go), which a Follower hears, re-reading the store after quiet
// time. Identical work in flight is evaluated once (share.go); deterministic
// verdicts go into the result cache, keyed by the work and the environment
// that made them (cache.go), which Submit reads before it queues (fromcache.go).
// A batch is queued whole or refused (rollback.go).
//
// Imported by the gateway, the worker and stack; it imports
// neither of them.
package dispatch
