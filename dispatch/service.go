package dispatch

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
)

// Service is the submitting end of the job queue, for everyone who wants
// evaluations: the gateway's batches and task checks, episodes through the
// gateway, and the search runner (Evaluate). It turns work into jobs (the
// result cache read first, identical work shared, a batch queued whole or
// refused) and follows their results; the worker package is the other end.
type Service struct {
	Bus *bus.Bus
	// Mode is the timing mode of the workers jobs are queued for.
	Mode func() string
	// Envs are the environments of the workers that would run a job now; a
	// cached verdict is served only when it was made in one of them. Nil:
	// none, and the cache answers nothing.
	Envs func() []Env
	// Poll: a follower re-reads the stored results after this long without
	// a notification (notifications are core NATS and can be lost). 0: 10 s.
	Poll time.Duration
	// Stall: a batch read without progress for this long is checked for
	// items nothing can answer any more (stall.go). 0: 30 s.
	Stall time.Duration
	Log   *slog.Logger

	lanesMu sync.Mutex
	lanes   *bus.Bucket // opened on first use (lanes.go)

	queueing sync.Map // client -> *sync.Mutex: one batch at a time queues its jobs (submit.go)

	look     pendingLook // the last look at what may still answer (pending.go)
	progress progress    // when each batch read last moved (stall.go)
}

func (s *Service) mode() string {
	if s.Mode == nil {
		return ""
	}
	return s.Mode()
}

func (s *Service) envs() []Env {
	if s.Envs == nil {
		return nil
	}
	return s.Envs()
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func (s *Service) poll() time.Duration {
	if s.Poll <= 0 {
		return 10 * time.Second
	}
	return s.Poll
}

// Batch is a request for evaluations: its items, each evaluated against Task.
type Batch struct {
	ID     string
	Task   eval.Task
	TaskID string // registry id; "" for an inline reference
	// TaskHash is eval.HashSource(Task.Source), made where the task entered
	// (the registry's, the request's inline reference) and carried here;
	// Submit refuses a batch without it.
	TaskHash string
	Items    []Item
	// Options, RewardFn and Deadline (zero: none) hold for every item.
	Options  eval.Options
	RewardFn string
	Deadline time.Time
	// Share: identical items are evaluated once and a cached verdict may
	// answer; false (a request with cache false) runs every item.
	Share bool
	// Who asked, logged with each verdict.
	RequestID, ClientID string
	// Record is stored under the batch's id once its work is queued, which
	// makes the batch visible (Record); it is the caller's own encoding.
	Record []byte
}

// Item is one candidate: Code, or a Completion (model text) to extract the
// code from.
type Item struct {
	Code       string
	Completion *string
	Prompt     []event.PromptMessage // what the model was asked; logged, not hashed
	// FinishReason is why the model stopped writing Completion, when the
	// caller said ("length": the token limit; submission.Word).
	FinishReason string
}

// EvalID is the id of item i of a batch: its job, its event, its eval_id.
func EvalID(batchID string, i int) string { return fmt.Sprintf("%s-%05d", batchID, i) }

// QueueFullError: the queue held its limit (bus.ErrQueueFull) when the
// batch's work was being queued; what was queued before was taken back.
type QueueFullError struct {
	Handled, Total int // items answered or queued before the refusal
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("the evaluation queue is full (%d of %d items queued)", e.Handled, e.Total)
}

func (e *QueueFullError) Unwrap() error { return bus.ErrQueueFull }

// StoreError: a store refused a write or a read, or did not answer. What
// names it for a client ("the queue", "the result store").
type StoreError struct {
	What string
	Err  error
}

func (e *StoreError) Error() string { return e.What + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }
