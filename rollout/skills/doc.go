// Package skills is the search's skill memory (shared/DESIGN.md, "The
// search"): repeated compile and runtime failures become one-sentence
// validity rules ("You cannot ..."), written by an LLM from the failing code,
// deduplicated by error signature and then by an LLM check, kept as versioned
// rules with provenance, retrieved into prompts, and retired by hand, when a
// kernel that breaks a rule compiles and passes, or when an on/off comparison
// shows the rule lowers the pass rate.
//
// Memory implements rollout.SkillMemory. Every change is a new version of a
// Rule, written through a Store (FileStore here) and reported to
// Config.OnChange, so the caller can log it (the skills table: Rule.Row).
//
// Imported by cmd/kernelgate and the gateway, which wire it to the search.
package skills
