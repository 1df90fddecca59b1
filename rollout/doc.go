// Package rollout is the AdaExplore search (shared/DESIGN.md, "The search"):
// a candidate tree per task, UCB selection with an expand arm, the small,
// large and tune actions, execution-signature deduplication, and the refine
// and sample baselines as policies of the same engine.
//
// This root package holds the engine and the contract its parts share
// (contract.go); the parts live below it and import it, never the reverse:
//
//   - rollout/llm: the OpenAI-compatible client (go-openai): retries,
//     concurrency, token and latency accounting, code extraction.
//   - rollout/skills: the skill memory: rules distilled from failures,
//     retrieved into prompts, revoked when they stop holding.
//
// cmd/kernelgate and the gateway wire the parts together.
package rollout
