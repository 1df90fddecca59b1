package export

import "github.com/kernelgate/kernelgate/event"

// SkillEvent is logged as the other events are (event.Publish).
var _ event.Event = SkillEvent{}

func (e SkillEvent) EventSubject() string { return event.SubjectSkill }
func (e SkillEvent) EventKey() string     { return e.EventID }
