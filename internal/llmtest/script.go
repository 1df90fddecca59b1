package llmtest

import (
	"strings"
	"time"
)

// Script is one scripted answer. Build it with Reply, Status, Hang,
// Truncated or Malformed and refine it with the methods below; each method
// returns a modified copy.
type Script struct {
	// Match selects the requests this entry answers; nil answers any.
	Match func(Request) bool
	// Times is how many requests this entry answers; 0 means forever.
	Times int

	Text         string // the assistant message
	FinishReason string // "stop" unless set
	// Status, when non-zero, answers with this HTTP status and an OpenAI
	// error body instead of a completion.
	Status     int
	RetryAfter string // Retry-After header value, if any
	// Delay holds the answer back; Hang holds it until the client gives up
	// (or the test ends).
	Delay time.Duration
	Hang  bool
	// Usage: the token counts reported; zero counts are estimated from the
	// text (len/4, rounded up). NoUsage leaves the usage field out, as some
	// servers do.
	PromptTokens, CompletionTokens int
	NoUsage                        bool
	// Raw, when set, is served verbatim as a 200 body (a broken server).
	Raw string
}

// Reply answers with text and finish_reason "stop".
func Reply(text string) Script { return Script{Text: text} }

// Truncated answers with text cut at max_tokens (finish_reason "length").
func Truncated(text string) Script { return Script{Text: text, FinishReason: "length"} }

// Status answers with an HTTP error status (401, 429, 500, ...) and an
// OpenAI-shaped error body.
func Status(code int) Script { return Script{Status: code} }

// Hang never answers: the request ends when the client cancels it.
func Hang() Script { return Script{Hang: true} }

// Malformed answers 200 with body served verbatim (not a completion).
func Malformed(body string) Script { return Script{Raw: body} }

// When restricts the entry to requests pred accepts.
func (s Script) When(pred func(Request) bool) Script { s.Match = pred; return s }

// OnUser restricts the entry to requests whose last user message contains
// substr.
func (s Script) OnUser(substr string) Script {
	return s.When(func(r Request) bool { return strings.Contains(r.LastUser(), substr) })
}

// Once answers one request only.
func (s Script) Once() Script { return s.Repeat(1) }

// Repeat answers n requests (0: forever).
func (s Script) Repeat(n int) Script { s.Times = n; return s }

// After delays the answer by d.
func (s Script) After(d time.Duration) Script { s.Delay = d; return s }

// WithRetryAfter sets the Retry-After header (seconds or an HTTP date).
func (s Script) WithRetryAfter(v string) Script { s.RetryAfter = v; return s }

// WithUsage reports exactly these token counts.
func (s Script) WithUsage(prompt, completion int) Script {
	s.PromptTokens, s.CompletionTokens = prompt, completion
	return s
}

// WithoutUsage leaves the usage field out of the response.
func (s Script) WithoutUsage() Script { s.NoUsage = true; return s }
