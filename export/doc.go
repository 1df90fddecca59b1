// Package export writes kernelgate's durable log (Parquet tables under
// Hive-style partitions); imported by
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
// A part that is not valid Parquet is moved aside, to
// root/.quarantine/<its path> (quarantine.go), by whichever reader meets it,
// so one bad file costs its own rows and not every export; VerifyFile reads
// a part whole (kernelgate doctor --data).
//
// Tables (SchemaVersion, in each file's key/value metadata):
//
//   - evaluations: one row per verdict (events.evaluation, event.Evaluation),
//     whoever asked: a reward request, an episode, or a search step (then
//     eval_id is the step's and batch_id the search id).
//   - episode_steps: one row per episode step (events.episode_step).
//   - rejected: events that could not be decoded, with their raw bytes.
//   - skills: one row per skill version (Skill); written by the search's skill
//     memory, read by the skills export.
//   - search_steps: one row per search step (events.search_step, event.SearchStep; search.go).
//   - searches: one row per search and state reached (events.search,
//     event.Search; searches.go): configuration, seed, budget, outcome.
//   - llm_calls: one row per LLM call of a search or the skill memory
//     (events.llm_call, event.LLMCall; llmcalls.go).
//
// The training-data exports built from these tables and the task suites
// (verl, sft, dpo, skills, arrow) are in export/dataset.
package export
