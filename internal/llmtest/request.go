package llmtest

import (
	"net/http"
	"time"
)

// Message is one chat message as the client sent it.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one recorded chat completion request.
type Request struct {
	Model       string
	Messages    []Message
	Temperature *float64 // nil: not sent
	// MaxTokens is max_tokens, or max_completion_tokens when only that was
	// sent (reasoning models); 0: neither.
	MaxTokens int
	Header    http.Header
	Body      []byte    // the raw JSON body
	At        time.Time // when it arrived
}

// wire is the request body as JSON has it.
type wire struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Temperature         *float64  `json:"temperature"`
	MaxTokens           int       `json:"max_tokens"`
	MaxCompletionTokens int       `json:"max_completion_tokens"`
}

// LastUser is the content of the last user message ("" if none).
func (r Request) LastUser() string { return r.last("user") }

// System is the content of the last system message ("" if none).
func (r Request) System() string { return r.last("system") }

func (r Request) last(role string) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == role {
			return r.Messages[i].Content
		}
	}
	return ""
}
