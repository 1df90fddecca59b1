package skills

import (
	"context"
	"sort"

	"github.com/kernelgate/kernelgate/rollout"
)

// Retrieve returns at most k active rules for a prompt: those whose
// signature (or a merged alias) equals Normalise(sig) first, then the
// most-hit ones. Within each group, rules recorded under the current triton
// major.minor come before rules from another toolchain: those may no longer
// hold, but they are still evidence, so they are ranked lower, not dropped.
func (m *Memory) Retrieve(ctx context.Context, sig string, k int) ([]rollout.Skill, error) {
	if k <= 0 {
		return nil, nil
	}
	m.mu.Lock()
	if err := m.loadLocked(ctx); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	current := m.cfg.Triton
	if current == "" {
		current = m.triton
	}
	type ranked struct {
		r         Rule
		match     bool
		toolchain bool
	}
	norm := ""
	if sig != "" {
		norm = Normalise(sig)
	}
	var cands []ranked
	for _, r := range m.rules {
		if !r.Active() {
			continue
		}
		same := current == "" || r.Triton == "" || minorVersion(r.Triton) == minorVersion(current)
		cands = append(cands, ranked{r, norm != "" && r.covers(norm), same})
	}
	m.mu.Unlock()

	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.match != b.match {
			return a.match
		}
		if a.toolchain != b.toolchain {
			return a.toolchain
		}
		if a.r.Hits != b.r.Hits {
			return a.r.Hits > b.r.Hits
		}
		return a.r.ID < b.r.ID
	})
	// Two rules with the same sentence (made before a merge existed) would
	// only take a prompt's room twice.
	var out []rollout.Skill
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == k {
			break
		}
		if !seen[c.r.Rule] {
			seen[c.r.Rule] = true
			out = append(out, c.r.Skill())
		}
	}
	return out, nil
}
