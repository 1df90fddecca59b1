package episode

import (
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// Turn budget.
const (
	DefaultMaxTurns = 4
	MaxTurns        = 16
)

// Episode is one episode's state (the value under key ID).
type Episode struct {
	ID       string `json:"episode_id"`
	TaskID   string `json:"task_id,omitempty"` // the registry id; "" for an inline reference
	TaskName string `json:"task_name"`
	TaskHash string `json:"task_hash"`
	// Reference is the task's source, kept so steps evaluate what the
	// episode started with even if the registry changes.
	Reference string       `json:"reference"`
	Prompt    string       `json:"prompt"`
	MaxTurns  int          `json:"max_turns"`
	RewardFn  string       `json:"reward_fn"`
	Options   eval.Options `json:"options"`

	Turn       int       `json:"turn"` // steps taken so far
	Done       bool      `json:"done"`
	DoneReason string    `json:"done_reason,omitempty"` // see rules.go
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	ExpiresAt  time.Time `json:"expires_at"` // UpdatedAt + the idle timeout
}

// Harness is the episode's task as a harness job carries it.
func (e Episode) Harness() eval.Task {
	path := "/inline/reference.py"
	if e.TaskID != "" {
		path = "/tasks/" + e.TaskID + ".py"
	}
	return eval.Task{Name: e.TaskName, Path: path, Source: e.Reference}
}

// Step is one turn (the value under key <episode_id>.<turn>).
type Step struct {
	Turn        int          `json:"turn"` // 1-based
	Completion  string       `json:"completion"`
	Observation string       `json:"observation"` // the feedback text shown to the policy
	Verdict     eval.Verdict `json:"verdict"`
	Reward      float64      `json:"reward"`
	Done        bool         `json:"done"`
	DoneReason  string       `json:"done_reason,omitempty"`
	EvalID      string       `json:"eval_id"`
	At          time.Time    `json:"at"`
}

// State is where an episode stands at some time.
type State string

const (
	StateActive  State = "active"
	StateDone    State = "done"
	StateExpired State = "expired"
)

// StateAt is e's state at now: done wins over expired (a finished episode
// is finished, however long ago).
func (e Episode) StateAt(now time.Time) State {
	switch {
	case e.Done:
		return StateDone
	case !now.Before(e.ExpiresAt):
		return StateExpired
	}
	return StateActive
}
