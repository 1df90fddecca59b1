package dataset

import (
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/export"
)

// SkipFailedStep prefixes the skipped count of search steps that evaluated
// nothing and are no answer of the model's, by what they failed at
// (failed_step_llm, failed_step_prompt, failed_step_evaluate,
// failed_step_nothing_to_tune; failed_step_unknown for steps logged before
// steps said).
const SkipFailedStep = "failed_step_"

// failedStepRows are the trajectories rows of the search steps that
// evaluated nothing and match the filters. A step whose answer held no
// usable code (no code, no edits, edits that do not apply) is the model's
// answer: a row with its prompt, its completion, reward 0 (the search's, as
// every path scores an invalid submission), no status and its error. The
// others (an LLM call that failed, a prompt that did not render, an
// evaluator that failed, a tune with nothing to tune) judged no answer of
// the model's; they are counted in skipped.
func (b *build) failedStepRows(steps []export.SearchStep) []trajRow {
	var out []trajRow
	for _, s := range steps {
		if !b.spec.Filter.searchStep(s) {
			continue
		}
		failure := "unknown"
		if s.Failure != nil {
			failure = *s.Failure
		}
		if failure != event.FailureAnswer || s.Completion == nil {
			b.m.Skipped[SkipFailedStep+failure]++
			continue
		}
		if len(s.PromptMessages) == 0 {
			b.m.Skipped[SkipNoPrompt]++
			continue
		}
		prompt := make([]Message, len(s.PromptMessages))
		for i, m := range s.PromptMessages {
			prompt[i] = Message{Role: m.Role, Content: m.Content}
		}
		out = append(out, trajRow{Source: "search", Trajectory: s.SearchID, Step: s.Seq, Parent: ptr(s.Parent),
			Action: s.Action, TaskID: s.TaskID, Prompt: prompt, PromptSource: PromptSent, Completion: s.Completion,
			Reward: s.Reward, Error: s.Error})
	}
	return out
}
