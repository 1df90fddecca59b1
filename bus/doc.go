// Package bus owns the NATS JetStream connection: an embedded server by
// default (file store under the data directory, no listening port), an
// external cluster with --nats URL. It is the only package that imports nats.
//
// It carries bytes and knows nothing about verdicts or events:
//
//   - JOBS, a bounded work queue (subjects jobs.>): the gateway publishes,
//     harness workers pull; a job is acked only after its handler returns nil,
//     so a worker that dies mid-job loses nothing.
//   - EVENTS, a durable log (subjects events.>), deduplicated by event id;
//     the Parquet sink pulls it in batches and acks after its rename.
//   - results, a KV bucket used as the result cache.
//   - named KV buckets (Bucket) for state that must survive a restart and be
//     shared by every gateway: registered tasks, episodes.
//   - notifications (Notify/Subscribe): core NATS, not persisted, for
//     results.<batch_id>; a missed one costs a wait, since the verdict's
//     durable record is its event.
//
// Imported by the gateway and the workers (and cmd/kernelgate to wire them).
package bus
