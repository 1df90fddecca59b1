package dataset

import (
	"cmp"
	"slices"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
)

// group is the evaluations of one task and prompt, for sft and dpo.
type group struct {
	taskID string
	prompt []Message
	rows   []export.Evaluation
}

// groups reads the evaluations that pass the filter (keepEvaluation), drops
// rows without a prompt (counted in the manifest), and groups the rest by
// task and prompt, in a stable order. A cached or shared answer is a row
// like any other: its verdict is the completion's, and a completion it
// repeats is one candidate (distinct), not a reason to lose the answer
// whose twin was filtered out or asked under another prompt. With byLogged
// (DPO), a row's prompt is the one it logged (a
// trainer's, an episode turn's conversation, a search step's messages), else
// the task's own, so answers are only paired under the prompt they answered;
// without (SFT: the best kernels for a task), every row has the task's own.
func (b *build) groups(byLogged bool) ([]*group, error) {
	rows, files, err := readTable(b.log(), b.root, export.TableEvaluations, b.spec.Filter, b.keepEvaluation)
	if err != nil {
		return nil, err
	}
	b.logSources(files)
	srcs := newSources(b.src.Tasks)
	byKey := map[string]*group{}
	var out []*group
	for _, r := range rows {
		var prompt []Message
		if byLogged {
			prompt = loggedPrompt(r)
		}
		src, ok := srcs.of(r)
		switch {
		case prompt == nil && !ok:
			b.m.Skipped[SkipNoPrompt]++
			continue
		case prompt == nil:
			prompt = userPrompt(src)
		}
		k := promptKey(r, src, prompt)
		g := byKey[k]
		if g == nil {
			g = &group{taskID: r.TaskID, prompt: prompt}
			byKey[k] = g
			out = append(out, g)
		}
		g.rows = append(g.rows, r)
	}
	slices.SortStableFunc(out, func(x, y *group) int { return cmp.Compare(x.taskID, y.taskID) })
	return out, nil
}

// byQuality orders rows best first: higher speedup (a null one last), then
// earlier, then by eval id.
func byQuality(x, y export.Evaluation) int {
	return cmp.Or(cmpSpeedup(y.Speedup, x.Speedup), x.TS.Compare(y.TS), cmp.Compare(x.EvalID, y.EvalID))
}

// cmpSpeedup compares speedups, a null one below any number.
func cmpSpeedup(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*a, *b)
}

// distinct keeps the first row of each key: codeKey for an export of code
// (SFT), saidKey for one of what the model said (DPO).
func distinct(rows []export.Evaluation, key func(export.Evaluation) string) []export.Evaluation {
	seen := map[string]bool{}
	var out []export.Evaluation
	for _, r := range rows {
		k := key(r)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// codeKey names a row's code: its code hash.
func codeKey(r export.Evaluation) string {
	if r.CodeHash == "" {
		return "code:" + r.Code
	}
	return r.CodeHash
}

// saidKey names what the model said, as DPO shows it (reply): its
// completion where one was logged, else its code. The same completion sent
// twice (a retry, a cache hit) is one candidate; the same code in other
// prose is two.
func saidKey(r export.Evaluation) string { return eval.HashSource(reply(r)[0].Content) }

func isCorrect(r export.Evaluation) bool { return r.Correct && r.Status == "correct" }
