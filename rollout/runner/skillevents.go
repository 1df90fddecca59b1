package runner

import (
	"context"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// SkillEvents returns a skills.Config.OnChange that logs every rule version
// on events.skill (the skills table). The memory is built before the
// Manager, so this stands apart from it:
//
//	mem := skills.New(store, client, skills.Config{OnChange: runner.SkillEvents(b, log)}, log)
func SkillEvents(b *bus.Bus, log *slog.Logger) func(skills.Rule, string) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(r skills.Rule, reason string) {
		row := r.Row()
		ev := export.SkillEvent{EventID: export.SkillEventID(row.SkillID, row.Version), Time: time.Now().UTC(),
			Reason: reason, Skill: row}
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		if err := event.Publish(ctx, b, ev); err != nil {
			log.Error("skill version not logged", "skill", row.SkillID, "version", row.Version, "err", err)
		}
	}
}
