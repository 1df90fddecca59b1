// Package submission finds the candidate code in an LLM completion and
// words the verdict of that code as the answer to the completion.
//
// Trainers send raw completions (reasoning, prose, one or more Markdown code
// blocks, chat-template control tokens when a trainer decoded them); the
// harness needs one Python source. Read turns control tokens into line
// breaks, reads fences as models write them (opened after prose on the
// same line, indented inside a list item, closed by a line with prose after
// the fence, ``` or ~~~, any case of language tag), takes the last Python
// block that defines ModelNew, else the last one, tolerates a fence left open
// by a truncated completion, takes the whole text when it is plain code, and
// otherwise returns an error wrapping ErrNoCode, which the gateway reports as
// an invalid_submission verdict without spending an evaluation on it.
//
// Word is what the reading means for the verdict: a completion cut off by the
// token limit is invalid_submission with error signature "truncated" (never
// a hack, whatever a half-written forward did), unfenced code gets a hint
// with its compile error, a completion without code says why. It runs per
// completion after the result cache, which is keyed by code alone.
//
// Every path that reads completions uses this package, so the same
// completion gives byte-identical code, and the same code_hash, everywhere:
// the gateway (POST /v1/rewards, /v1/evaluations, episode steps, OpenRLHF,
// through dispatch), the rollout search (rollout/llm's Extractor) and
// cmd/kernelgate (files given on the command line may be saved
// completions). It imports only the standard library and eval, the leaf
// vocabulary; everything it reads is untrusted, so it is fuzzed.
package submission
