package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// What went wrong, for errors.Is. Complete's errors wrap one of these (or
// are ctx.Err() itself when the caller cancelled).
var (
	ErrUnauthorized = errors.New("unauthorized")         // 401, 403: check the API key
	ErrBadRequest   = errors.New("request rejected")     // other 4xx: model name, context length, ...
	ErrRateLimited  = errors.New("rate limited")         // 429 after every retry
	ErrServer       = errors.New("server error")         // 5xx after every retry
	ErrTimeout      = errors.New("timed out")            // an attempt ran past Config.Timeout
	ErrUnreachable  = errors.New("endpoint unreachable") // connection refused, reset, DNS, ...
	ErrBadResponse  = errors.New("bad response")         // 200 but not a usable completion
)

// StatusError is an HTTP error answer; it unwraps to its class above.
type StatusError struct {
	Code    int
	Message string // the server's message, truncated
	class   error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s (%v): %s", e.Code, http.StatusText(e.Code), e.class, e.Message)
}

func (e *StatusError) Unwrap() error { return e.class }

// classify maps a go-openai error to a typed one and whether to retry it.
// attemptCtx is the per-attempt context (its deadline is Config.Timeout).
func classify(err error, attemptCtx context.Context) (error, bool) {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		return statusError(apiErr.HTTPStatusCode, apiErr.Message)
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode > 0:
		return statusError(reqErr.HTTPStatusCode, string(reqErr.Body))
	case errors.Is(err, context.DeadlineExceeded) && attemptCtx.Err() != nil:
		return fmt.Errorf("%w: %v", ErrTimeout, err), true
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return fmt.Errorf("%w: undecodable body: %v", ErrBadResponse, err), true
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", ErrUnreachable, err), true
	}
	// go-openai's own checks before sending (e.g. a model it refuses).
	return fmt.Errorf("%w: %v", ErrBadRequest, err), false
}

func statusError(code int, msg string) (error, bool) {
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	e := &StatusError{Code: code, Message: msg}
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.class = ErrUnauthorized
	case code == http.StatusTooManyRequests:
		e.class = ErrRateLimited
	case code == http.StatusRequestTimeout:
		e.class = ErrTimeout
	case code >= 500:
		e.class = ErrServer
	case code >= 400:
		e.class = ErrBadRequest
	default: // 1xx/3xx that go-openai treats as failures
		e.class = ErrBadResponse
	}
	retry := e.class == ErrRateLimited || e.class == ErrServer || e.class == ErrTimeout
	return e, retry
}
