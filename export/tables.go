package export

// SchemaVersion is the version (MAJOR.MINOR) of the tables written here.
// It is stored in every file's key/value metadata under MetaSchemaVersion.
// Within a major version columns are only added.
//
// Changelog: 1.0 (2026-11-29) first version; 1.1 (2026-11-30) evaluations gains
// task_source (exports rebuild prompts from it), and the skills table is defined;
// 1.2 (2026-11-30) the search_steps table, and skills rows carry event_id;
// 1.3 (2026-12-01) evaluations' stage_ms (a MAP, which Hugging Face datasets
// cannot load) becomes stage_times, a list of (stage, ms) structs;
// evaluations and episode_steps gain prompt (the chat messages the completion
// answered), episode_steps done_reason (null while running) and max_turns;
// evaluations gain source_eval_id (the run a cached or shared answer came
// from) and options (the harness options, a struct); search_steps' node,
// eval_id and status are null, not 0 and "", for a step that made no node;
// the searches table (configuration, seed, budget, state, outcome) and the
// llm_calls table (every LLM call, its purpose, messages and cost); skills
// rows gain reason, pattern, aliases and the on/off counts (and keep up to 32
// example eval ids, not 5); search_steps gain skill_versions;
// 1.4 (2026-12-01) evaluations gain reference_shared;
// 1.5 (2026-12-07) a value not known is null, not "": evaluations' request_id,
// client_id, task_id (an inline reference), task_name, tol_dtype, tol_source,
// feedback, error_signature, task_error, output_tail, task_source and the env
// columns (device, gpu_name, gpu_uuid, driver, python, torch, triton,
// harness_version, sandbox, sandbox_detail), and episode_steps' client_id,
// become optional (a 1.4 file's "" still reads as "" into the Go rows);
// evaluations gain valid (the API's valid: false for a sample to drop) and
// retry (the verdict's: "deadline" for a deadline stop);
// on the search side, search_steps gain call_ids (the step's
// llm_calls) and failure (what a failed step failed at), and llm_calls gain
// step_seq and step_id (the step a call was made for), keys both ways;
// search_steps' prompt_version, completion, code, model, compiled, correct,
// error_signature, feedback, best_node and error, llm_calls' model, and
// skills' torch, triton, gpu_arch, retired_reason and source_search_id are
// null where 1.4 wrote "", 0 or false for not known; search_steps.reward is
// null for a failed step that judged no answer of the model's (0 for an
// answer without usable code).
const SchemaVersion = "1.5"

// Key/value metadata keys of every file the sink writes.
const (
	MetaSchemaVersion = "kernelgate.schema_version"
	MetaTable         = "kernelgate.table"
	MetaWriter        = "kernelgate.writer_id"
)

// Table names (the table=<name> partition).
const (
	TableEvaluations  = "evaluations"
	TableEpisodeSteps = "episode_steps"
	TableRejected     = "rejected"
	TableSkills       = "skills" // skills.go: written by the skill library, not the sink
)
