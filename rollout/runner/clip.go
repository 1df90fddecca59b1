package runner

import (
	"fmt"

	"github.com/kernelgate/kernelgate/rollout"
)

// Bus values (KV entries and events) must stay under NATS's 1 MiB: the
// prompt (all messages together) and the completion keep at most
// clipBytes each. The code is kept whole: a resume rebuilds the tree from it.
const clipBytes = 256 << 10

// clip returns s with its prompt and completion cut to clipBytes, each cut
// text ending in a marker that says how much was dropped.
func clip(s rollout.Step) rollout.Step {
	s.Completion = clipText(s.Completion, clipBytes)
	total := 0
	for _, m := range s.Prompt {
		total += len(m.Content)
	}
	if total > clipBytes {
		msgs := make([]rollout.Message, len(s.Prompt))
		left := clipBytes
		for i, m := range s.Prompt {
			m.Content = clipText(m.Content, max(left, 0))
			left -= len(m.Content)
			msgs[i] = m
		}
		s.Prompt = msgs
	}
	return s
}

// clipText cuts text to about n bytes (on a rune boundary) plus a marker.
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && (text[cut]&0xC0) == 0x80 {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[kernelgate: %d bytes cut]", len(text)-cut)
}
