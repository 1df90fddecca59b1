// Package dataset builds training-data exports from kernelgate's Parquet
// log (package export) and task suites: `kernelgate export` and
// POST /v1/exports; and a batch's code for GET /v1/batches/{id}/code
// (BatchCode). Imported by cmd and the gateway; it only reads the log.
//
// Formats (Spec.Format), each a directory with a manifest.json:
//
//   - verl: RL prompt datasets from task suites (train.parquet, test.parquet)
//     in verl's data layout: data_source, prompt (chat messages), ability,
//     reward_model {style, ground_truth = task id}, extra_info, and task_id
//     (the task id again, top-level, for OpenRLHF's --label_key).
//   - sft: the best correct kernels per task (sft.parquet, chat messages).
//   - dpo: chosen/rejected kernel pairs per task (dpo.parquet, TRL's
//     conversational preference layout).
//   - skills: the skills table (skills.parquet).
//   - arrow: each raw table as one Arrow IPC file (<table>.arrow), each
//     filtered on the columns it has (the manifest's filters_applied); a
//     table no row of which matched is not written (the manifest's empty).
//
// Every prompt is tasks.Prompt(task source), the text used at inference, so
// training and inference prompts match. Part files being written (dot-
// prefixed temp names) are never read. Filters that match nothing give
// valid empty files (schema, 0 rows; arrow: none, said in the manifest); rows without a prompt are counted in
// the manifest's skipped, never dropped silently. Evaluations the API
// answered valid=false (a deadline stop, a broken reference) are in no
// export unless the request includes them (IncludeInvalid): skipped.invalid
// counts them.
package dataset
