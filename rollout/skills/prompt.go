package skills

import (
	"fmt"
	"strings"

	"github.com/kernelgate/kernelgate/rollout"
)

// Prompt sizes: enough code to see the mistake, small enough for any model.
const (
	snippetLen  = 3 << 10
	feedbackLen = 1 << 10
)

const extractSystem = `You maintain validity rules for writing Triton GPU kernels. ` +
	`You are shown kernels that failed with the same error. Write ONE sentence, at most 300 characters, ` +
	`starting with "You cannot", that states the general mistake so that it can be avoided on any task ` +
	`(no task-specific names, shapes or numbers). Optionally add a second line "PATTERN: <regexp>" with a ` +
	`Go (RE2) regular expression that matches source code making this mistake. ` +
	`If the failures do not share one general, avoidable mistake, answer exactly ABSTAIN.`

func extractPrompt(job *pending) []rollout.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Error signature: %s\nFailures seen: %d\n", job.sig, job.count)
	for i, code := range job.codes {
		fmt.Fprintf(&b, "\n### Failure %d\nFeedback:\n%s\nCode:\n```python\n%s\n```\n",
			i+1, truncate(job.feedback[i], feedbackLen), truncate(code, snippetLen))
	}
	b.WriteString("\nAnswer with the rule (and optional PATTERN line) or ABSTAIN, nothing else.")
	return []rollout.Message{{Role: "system", Content: extractSystem}, {Role: "user", Content: b.String()}}
}

const dedupSystem = `You deduplicate validity rules for writing Triton GPU kernels. ` +
	`If the new rule forbids the same mistake as one of the existing rules, answer exactly ` +
	`"DUPLICATE <id>" with that rule's id; otherwise answer exactly "NEW".`

func dedupPrompt(sig, rule string, cands []Rule) []rollout.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "New rule (error signature %s):\n%s\n\nExisting rules:\n", sig, rule)
	for _, c := range cands {
		fmt.Fprintf(&b, "- %s: %s (error signature %s)\n", c.ID, c.Rule, c.Signature)
	}
	return []rollout.Message{{Role: "system", Content: dedupSystem}, {Role: "user", Content: b.String()}}
}
