package export

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kernelgate/kernelgate/bus"
)

// Event is one row to be, as it travels on the bus: its subject names the
// table, its id dedups it (a repeated publish is one row).
type Event interface {
	EventSubject() string
	EventKey() string
}

// Publish logs ev on its subject: the one way every part of kernelgate
// writes a row.
func Publish(ctx context.Context, b *bus.Bus, ev Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("export.Publish %s: %w", ev.EventSubject(), err)
	}
	return b.PublishEvent(ctx, ev.EventSubject(), ev.EventKey(), data)
}

func (e EvaluationEvent) EventSubject() string  { return SubjectEvaluation }
func (e EvaluationEvent) EventKey() string      { return e.EventID }
func (e EpisodeStepEvent) EventSubject() string { return SubjectEpisodeStep }
func (e EpisodeStepEvent) EventKey() string     { return e.EventID }
func (e SearchStepEvent) EventSubject() string  { return SubjectSearchStep }
func (e SearchStepEvent) EventKey() string      { return e.EventID }
func (e SearchEvent) EventSubject() string      { return SubjectSearch }
func (e SearchEvent) EventKey() string          { return e.EventID }
func (e SkillEvent) EventSubject() string       { return SubjectSkill }
func (e SkillEvent) EventKey() string           { return e.EventID }
func (e LLMCallEvent) EventSubject() string     { return SubjectLLMCall }
func (e LLMCallEvent) EventKey() string         { return e.EventID }
