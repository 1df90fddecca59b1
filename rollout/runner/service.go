package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
)

// Request starts a search: POST /v1/searches's body, the CLI's flags.
type Request struct {
	// TaskID names a registered task; Reference is a task's source instead.
	TaskID    string `json:"task_id,omitempty"`
	Reference string `json:"reference,omitempty"`
	// Policy is adaexplore (default), refine or sample.
	Policy      string `json:"policy,omitempty"`
	Steps       int    `json:"steps"`
	TokenBudget int    `json:"token_budget,omitempty"`
	Seed        int64  `json:"seed,omitempty"`
	// LLM overrides the server's or CLI's defaults (flags); empty fields
	// keep them. The key is never logged or echoed.
	LLM     LLMSettings   `json:"llm,omitempty"`
	Options *eval.Options `json:"options,omitempty"`
}

// LLMSettings select the OpenAI-compatible endpoint.
type LLMSettings struct {
	BaseURL     string   `json:"base_url,omitempty"` // ends in /v1
	Model       string   `json:"model,omitempty"`
	APIKey      string   `json:"api_key,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
}

// States of a search: running, then the rollout.Result status it ended with.
const (
	StateRunning   = "running"
	StateDone      = "done"
	StateBudget    = "budget"
	StateCancelled = "cancelled"
	StateFailed    = "failed"
)

// Status is GET /v1/searches/{id} and the CLI's --json object.
type Status struct {
	SearchID    string         `json:"search_id"`
	TaskID      string         `json:"task_id"`
	Policy      string         `json:"policy"`
	State       string         `json:"state"`
	Error       string         `json:"error,omitempty"` // why it failed
	Steps       int            `json:"steps"`           // steps taken so far
	StepsBudget int            `json:"steps_budget"`
	TokensIn    int            `json:"tokens_in"`
	TokensOut   int            `json:"tokens_out"`
	Actions     map[string]int `json:"actions"` // steps per action
	Best        *Best          `json:"best"`    // nil until a kernel compiles
	Nodes       []NodeSummary  `json:"nodes"`   // the tree, one entry per node
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// Best is the best node so far, by (compiled, correct, speedup).
type Best struct {
	Node    int           `json:"node"`
	Reward  float64       `json:"reward"`
	Verdict *eval.Verdict `json:"verdict"`
	Code    string        `json:"code"`
}

// NodeSummary is one node of the tree without its code.
type NodeSummary struct {
	Node      int      `json:"node"`
	Parent    int      `json:"parent"`
	Action    string   `json:"action"`
	Status    string   `json:"status"` // the verdict's
	Reward    float64  `json:"reward"`
	Speedup   *float64 `json:"speedup"`
	Duplicate bool     `json:"duplicate"`
}

// Event is one step as subscribers see it: Seq numbers the search's steps
// from 1 (failed steps included), so a client can resume a stream.
type Event struct {
	Seq int `json:"seq"`
	rollout.Step
}

// Service is what the gateway and the CLI need of a runner.
type Service interface {
	// Start validates req, registers the search and runs it in the
	// background; the returned status is "running".
	Start(ctx context.Context, req Request) (Status, error)
	Get(ctx context.Context, id string) (Status, error)
	// Subscribe replays the steps with Seq > after, then streams new ones;
	// the channel closes when the search ends (after its last step) or ctx
	// ends.
	Subscribe(ctx context.Context, id string, after int) (<-chan Event, error)
	// Cancel stops a running search (in-flight LLM calls are cancelled);
	// cancelling an ended search returns its status unchanged.
	Cancel(ctx context.Context, id string) (Status, error)
	// List returns the searches that match q, newest first, without their
	// node lists (ListQuery.Select says exactly which).
	List(ctx context.Context, q ListQuery) ([]Status, error)
}

// Errors a Service returns; the gateway maps them to 404 and 400.
var (
	ErrNotFound   = errors.New("no such search")
	ErrBadRequest = errors.New("bad search request")
	// ErrTaskNotFound: the request names a task_id no suite or API call
	// registered (it wraps ErrBadRequest too).
	ErrTaskNotFound = fmt.Errorf("%w: unknown task_id", ErrBadRequest)
)
