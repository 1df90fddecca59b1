// Package llm is the search's LLM client: rollout.LLM over any
// OpenAI-compatible chat endpoint (vLLM, SGLang, OpenAI) through go-openai,
// with per-call timeouts, retries with backoff, a concurrency limit, token and
// latency accounting per Purpose, and typed errors (ErrUnauthorized,
// ErrUnreachable, ErrBadResponse, ...) the search turns into failed steps.
//
// It also holds the parsing of what models answer: Extractor, whose code
// comes from harness/submission (the one reading of a completion, the
// gateway's), and ExtractEdits/ApplyEdits (search/replace edits in the
// EditFormat the prompt templates ask for).
//
// Imported by the rollout engine's wiring (cmd/kernelgate, gateway); it
// imports the rollout contract and harness/submission. Tests use
// internal/llmtest.
package llm
