// Package runner runs searches for the CLI (`kernelgate search`, `adapt`)
// and the gateway (/v1/searches): it builds a rollout.Config from a Request,
// wires the LLM client, the skill memory and the evaluator, numbers and logs
// every step (the search_steps table, the event stream), fans steps out to
// subscribers (SSE), cancels, and resumes a search from its logged steps.
//
// service.go is the contract the CLI and the gateway use.
package runner
