// Package submission finds the candidate code in an LLM completion.
//
// Trainers send raw completions (reasoning, prose, one or more Markdown code
// blocks, chat-template control tokens when a trainer decoded them); the
// harness needs one Python source. Extract turns control tokens into line
// breaks, takes the last fenced Python block (or bare fence) that defines
// ModelNew, else the last one, tolerates a fence left open by a truncated
// completion, takes the whole text when it is plain code, and otherwise
// returns an error wrapping ErrNoCode, which the gateway reports as an
// invalid_submission verdict without spending an evaluation on it.
//
// Who imports it: the gateway (POST /v1/rewards and episode steps take
// completions), the rollout search (LLM proposals) and cmd/kernelgate (files
// given on the command line may be saved completions). It imports only the
// standard library; everything it reads is untrusted, so it is fuzzed.
package submission
