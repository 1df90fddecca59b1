// Package export writes kernelgate's durable log (Parquet tables under
// Hive-style partitions) and, later, the training-data exports; imported by
// the gateway and cmd.
//
// The log is one Sink reading the EVENTS stream through bus.Events. Each
// batch becomes one Parquet file per (table, date) under
//
//	root/table=<table>/date=<YYYY-MM-DD>/part-<writerID>-<unixnano>-<seq>.parquet
//
// written under a dot-prefixed temp name, fsync'd, renamed and the directory
// fsync'd before the batch is acked. Redelivered events are dropped by event
// id, including across a restart (the sink seeds its id set from recent
// files), so a kill -9 at any moment leaves every acked event exactly once.
//
// Tables (SchemaVersion, in each file's key/value metadata):
//
//   - evaluations: one row per verdict (events.evaluation, EvaluationEvent).
//   - episode_steps: one row per episode step (events.episode_step).
//   - rejected: events that could not be decoded, with their raw bytes.
package export
