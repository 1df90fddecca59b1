// Package bus owns the NATS JetStream connection: an embedded server by
// default (file store under the data directory, no listening port unless
// serve --nats-listen opens one for workers on other hosts, with a token), an
// external server or cluster with --nats URL (credentials and TLS through
// nats.go's options). It is the only package that imports nats.
//
// It carries bytes and knows nothing about verdicts or events:
//
//   - JOBS, a bounded work queue (subjects jobs.>): the gateway publishes,
//     harness workers pull; a job is acked only after its handler returns nil,
//     so a worker that dies mid-job loses nothing. Every stored job is
//     announced on wake.<its subject> (core NATS, wake.go), and so is one
//     handed back, when its delay ends: a worker with a free slot waits for
//     that, not in a poll, and starts the job within milliseconds. Idle, it
//     fetches once per queue every JobRecheck (5 s), for a lost wake-up and
//     a job redelivered after JobAckWait (its worker died), which nothing
//     announces.
//   - EVENTS, a durable log (subjects events.>), deduplicated by event id;
//     the Parquet sink (SinkDurable, created by Open) pulls it in batches and
//     acks after its rename, and an event leaves EVENTS once acked (interest
//     retention): never before the sink has written it (setup.go).
//   - cache, a KV bucket used as the result cache.
//   - batches, a KV bucket: each batch's record and its items' results, kept
//     ResultTTL so a client can read them after its request is gone.
//   - named KV buckets (Bucket) for state that must survive a restart and be
//     shared by every gateway: registered tasks, episodes.
//   - workers, a KV bucket where each worker process announces itself while it
//     runs (entries lapse WorkerTTL after the last refresh).
//   - notifications (Notify/Subscribe): core NATS, not persisted, for
//     results.<batch_id>; a missed one costs a wait, not data, since every
//     result is stored in batches (and logged as an event) first. Subjects
//     under jobs., events. and wake. are the bus's own.
//
// Every stream and bucket has a byte limit (limits.go). A watcher
// (storage.go) says whether the store can take writes (Writable: a full
// disk, a full EVENTS or batches, a write the server refused for space) and
// restarts an embedded JetStream that a full disk left failing; reads are
// bounded (deadline.go); the embedded server's reports of damaged files are
// read (damage.go), and Verify checks a stopped store (verify.go).
//
// Imported by dispatch (the evaluation service), the worker, the gateway
// (idempotency keys, readiness, metrics) and stack to wire them.
package bus
