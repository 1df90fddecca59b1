package skills

import (
	"context"
	"fmt"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout"
)

// onOffLocked counts the observation in each listed rule's arms and retires
// a rule once both arms are large enough and it clearly lowers the pass rate.
func (m *Memory) onOffLocked(ctx context.Context, o rollout.Observation) error {
	pass := o.Verdict.Status == eval.StatusCorrect
	touched := map[string]bool{}
	count := func(ids []string, used bool) {
		for _, id := range ids {
			r, ok := m.rules[id]
			if !ok || !r.Active() || touched[id] {
				continue // unknown, retired, or listed twice
			}
			touched[id] = true
			if used {
				r.OnOff.Used++
				r.OnOff.UsedPass += b2i(pass)
			} else {
				r.OnOff.Omitted++
				r.OnOff.OmittedPass += b2i(pass)
			}
			m.rules[id] = r // counts between versions are not a version
		}
	}
	count(o.Used, true)
	count(o.Omitted, false)
	for _, id := range m.sortedIDs() {
		if !touched[id] {
			continue
		}
		r, c := m.rules[id], m.rules[id].OnOff
		if c.Used < m.cfg.OnOffMin || c.Omitted < m.cfg.OnOffMin {
			continue
		}
		with, without := float64(c.UsedPass)/float64(c.Used), float64(c.OmittedPass)/float64(c.Omitted)
		if with >= without-m.cfg.OnOffMargin {
			continue
		}
		detail := fmt.Sprintf("onoff: pass rate %.2f with the rule (n=%d) vs %.2f without (n=%d)", with, c.Used, without, c.Omitted)
		if err := m.retireLocked(ctx, r, ReasonRetiredOnOff, detail); err != nil {
			return err
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
