package llm

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kernelgate/kernelgate/rollout"
)

// Client is a rollout.LLM over an OpenAI-compatible endpoint. It is safe for
// concurrent use; Concurrency bounds the calls in flight.
type Client struct {
	cfg  Config
	api  *openai.Client
	log  *slog.Logger
	sem  chan struct{}
	acct accounts
}

var _ rollout.LLM = (*Client)(nil)

// New checks cfg and returns a client; it contacts nothing. A nil log
// discards.
func New(cfg Config, log *slog.Logger) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	// Keep as many idle connections as calls may be in flight (net/http
	// keeps 2 per host), so a busy search reuses them instead of churning.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Concurrency
	oc.HTTPClient = headerDoer{c: &http.Client{Transport: tr}}
	return &Client{
		cfg: cfg,
		api: openai.NewClientWithConfig(oc),
		log: log.With("component", "llm", "model", cfg.Model),
		sem: make(chan struct{}, cfg.Concurrency),
	}, nil
}

// Totals returns the cumulative accounting, overall and per Purpose.
func (c *Client) Totals() Totals { return c.acct.totals() }

// Complete sends req, retrying what is worth retrying. A completion cut at
// max tokens comes back with FinishReason "length" and no error. When ctx
// ends, in-flight HTTP calls stop and the error is ctx.Err() itself.
func (c *Client) Complete(ctx context.Context, req rollout.Request) (rollout.Completion, error) {
	start := time.Now()
	st := Stats{Calls: 1}
	defer func() {
		st.Latency = time.Since(start)
		c.acct.add(req.Purpose, st)
	}()

	select {
	case c.sem <- struct{}{}:
		defer func() { <-c.sem }()
	case <-ctx.Done():
		st.Canceled = 1
		return rollout.Completion{}, ctx.Err()
	}

	oreq := c.request(req)
	var err error
	for n := 0; ; n++ {
		st.Attempts++
		var comp rollout.Completion
		var retryAfter time.Duration
		var retry bool
		comp, retryAfter, retry, err = c.attempt(ctx, oreq)
		if err == nil {
			comp.Latency = time.Since(start)
			return c.count(&st, req, comp), nil
		}
		if ctx.Err() != nil {
			st.Canceled = 1
			return rollout.Completion{}, ctx.Err()
		}
		if !retry || n >= c.cfg.Retries {
			break
		}
		wait := c.backoff(n, retryAfter)
		c.log.Warn("llm call failed, retrying", "purpose", req.Purpose, "attempt", n+1, "wait", wait, "err", err)
		if sleep(ctx, wait) != nil {
			st.Canceled = 1
			return rollout.Completion{}, ctx.Err()
		}
	}
	st.Failures = 1
	c.log.Warn("llm call failed", "purpose", req.Purpose, "attempts", st.Attempts, "err", err)
	return rollout.Completion{}, fmt.Errorf("llm %s: %d attempt(s): %w", req.Purpose, st.Attempts, err)
}

// attempt is one HTTP request under the per-attempt timeout. It returns the
// server's Retry-After, if any, for the backoff, and whether a failure is
// worth retrying.
func (c *Client) attempt(ctx context.Context, oreq openai.ChatCompletionRequest) (_ rollout.Completion, retryAfter time.Duration, retry bool, _ error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var header string
	actx = context.WithValue(actx, retryAfterKey{}, &header)
	resp, err := c.api.CreateChatCompletion(actx, oreq)
	retryAfter = parseRetryAfter(header, time.Now())
	if err != nil {
		err, retry = classify(err, actx)
		return rollout.Completion{}, retryAfter, retry, err
	}
	if len(resp.Choices) == 0 {
		return rollout.Completion{}, retryAfter, true, fmt.Errorf("%w: no choices", ErrBadResponse)
	}
	ch := resp.Choices[0]
	model := resp.Model
	if model == "" {
		model = c.cfg.Model
	}
	return rollout.Completion{
		Text:             ch.Message.Content,
		Model:            model,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
		FinishReason:     string(ch.FinishReason),
	}, retryAfter, false, nil
}

// count estimates tokens where the server sent no usage (the search's token
// budget needs a number either way) and adds the completion to st.
func (c *Client) count(st *Stats, req rollout.Request, comp rollout.Completion) rollout.Completion {
	if comp.PromptTokens == 0 && comp.CompletionTokens == 0 {
		st.Estimated = 1
		for _, m := range req.Messages {
			comp.PromptTokens += Estimate(m.Content)
		}
		comp.CompletionTokens = Estimate(comp.Text)
	}
	st.PromptTokens += comp.PromptTokens
	st.CompletionTokens += comp.CompletionTokens
	if comp.FinishReason == string(openai.FinishReasonLength) {
		st.Truncated = 1
		c.log.Info("llm completion cut at max tokens", "purpose", req.Purpose, "completion_tokens", comp.CompletionTokens)
	}
	c.log.Debug("llm call", "purpose", req.Purpose, "attempts", st.Attempts, "latency", comp.Latency,
		"prompt_tokens", comp.PromptTokens, "completion_tokens", comp.CompletionTokens,
		"estimated", st.Estimated == 1, "finish", comp.FinishReason)
	return comp
}

// Estimate is the token count assumed for text when the server reports no
// usage: len(text)/4, rounded up (about right for English and code).
func Estimate(text string) int { return (len(text) + 3) / 4 }

// request maps a rollout.Request onto go-openai's.
func (c *Client) request(req rollout.Request) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	temp := *c.cfg.Temperature
	if req.Temperature != nil {
		temp = *req.Temperature
	}
	maxTok := c.cfg.MaxTokens
	if req.MaxTokens > 0 {
		maxTok = req.MaxTokens
	}
	oreq := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, MaxTokens: maxTok, Temperature: float32(temp)}
	if temp == 0 {
		// go-openai omits a zero temperature (omitempty) and servers then
		// default to 1; the smallest float32 is sent as greedy instead.
		oreq.Temperature = math.SmallestNonzeroFloat32
	}
	if openai.NewReasoningValidator().Validate(oreq) != nil {
		// Reasoning models (o-series, gpt-5) refuse max_tokens and
		// temperature: send their form instead of failing every call.
		oreq.MaxTokens, oreq.MaxCompletionTokens, oreq.Temperature = 0, maxTok, 0
	}
	return oreq
}
