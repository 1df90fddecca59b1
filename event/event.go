package event

import (
	"context"
	"encoding/json"
	"fmt"
)

// Subjects of the EVENTS stream, one per table of the log.
const (
	SubjectEvaluation  = "events.evaluation"
	SubjectEpisodeStep = "events.episode_step"
	SubjectSearchStep  = "events.search_step"
	SubjectSearch      = "events.search"
	SubjectLLMCall     = "events.llm_call"
	SubjectSkill       = "events.skill" // export.SkillEvent: its body is the skills row itself
)

// Event is one row to be, as it travels on the bus: its subject names the
// table, its key dedups it (a repeated publish is one row).
type Event interface {
	EventSubject() string
	EventKey() string
}

// Publisher appends an event's bytes to the stream under its subject and
// dedup id; *bus.Bus is one.
type Publisher interface {
	PublishEvent(ctx context.Context, subject, id string, data []byte) error
}

// Publish logs ev on its subject: the one way every part of kernelgate
// writes a row.
func Publish(ctx context.Context, p Publisher, ev Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("event.Publish %s: %w", ev.EventSubject(), err)
	}
	return p.PublishEvent(ctx, ev.EventSubject(), ev.EventKey(), data)
}

// PromptMessage is one chat message of a prompt.
type PromptMessage struct {
	Role    string `json:"role" parquet:"role"`
	Content string `json:"content" parquet:"content"`
}

func (e Evaluation) EventSubject() string  { return SubjectEvaluation }
func (e Evaluation) EventKey() string      { return e.EventID }
func (e EpisodeStep) EventSubject() string { return SubjectEpisodeStep }
func (e EpisodeStep) EventKey() string     { return e.EventID }
func (e SearchStep) EventSubject() string  { return SubjectSearchStep }
func (e SearchStep) EventKey() string      { return e.EventID }
func (e Search) EventSubject() string      { return SubjectSearch }
func (e Search) EventKey() string          { return e.EventID }
func (e LLMCall) EventSubject() string     { return SubjectLLMCall }
func (e LLMCall) EventKey() string         { return e.EventID }
