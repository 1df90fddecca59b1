package dataset

import (
	"cmp"
	"slices"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/export"
)

// dpoRow is one preference pair in TRL's conversational layout: the
// prompt's messages, and chosen and rejected as one assistant message each:
// the model's own text where it was logged (a completion), else the code.
type dpoRow struct {
	Prompt          []Message `parquet:"prompt,list"`
	Chosen          []Message `parquet:"chosen,list"`
	Rejected        []Message `parquet:"rejected,list"`
	TaskID          string    `parquet:"task_id"`
	ChosenEvalID    string    `parquet:"chosen_eval_id"`
	RejectedEvalID  string    `parquet:"rejected_eval_id"`
	ChosenSpeedup   *float64  `parquet:"chosen_speedup,optional"`
	RejectedSpeedup *float64  `parquet:"rejected_speedup,optional"`
	RejectedStatus  string    `parquet:"rejected_status"`
}

// maxSide bounds each side of a task's pairs (the pairs are its square).
const maxSide = 256

// dpo writes dpo.parquet: per task, pairs of a correct kernel (chosen) and
// an incorrect one, or a correct one slower by the margin (rejected), each
// pair under the one prompt both answered; at most MaxPairsPerTask pairs per
// task, whatever the number of prompts.
func (b *build) dpo() error {
	gs, err := b.groups(true)
	if err != nil {
		return err
	}
	var rows []dpoRow
	for len(gs) > 0 {
		n := 1 // groups are sorted by task: gs[:n] are one task's
		for n < len(gs) && gs[n].taskID == gs[0].taskID {
			n++
		}
		for _, p := range b.taskPairs(gs[:n]) {
			c, r := p.chosen, p.rejected
			rows = append(rows, dpoRow{
				Prompt: p.g.prompt, Chosen: reply(c), Rejected: reply(r), TaskID: p.g.taskID,
				ChosenEvalID: c.EvalID, RejectedEvalID: r.EvalID,
				ChosenSpeedup: c.Speedup, RejectedSpeedup: r.Speedup, RejectedStatus: r.Status,
			})
		}
		gs = gs[n:]
	}
	return output(b, "dpo.parquet", rows)
}

// pair is a (chosen, rejected) pair of one group and its ranks (best 0).
type pair struct {
	g                *group
	chosen, rejected export.Evaluation
	i, j             int
}

// taskPairs picks up to MaxPairsPerTask pairs of one task's groups (one per
// prompt), deterministically: by increasing rank sum across the groups, so
// that each prompt's best pairs come before any prompt's worse ones, then
// by group order and chosen rank.
func (b *build) taskPairs(gs []*group) []pair {
	var ps []pair
	for _, g := range gs {
		ps = append(ps, b.pairs(g)...)
	}
	slices.SortStableFunc(ps, func(x, y pair) int { return cmp.Compare(x.i+x.j, y.i+y.j) })
	return ps[:min(len(ps), b.spec.MaxPairsPerTask)]
}

// pairs lists every (chosen, rejected) pair of group g, best first: both
// sides ranked (best chosen first; rejected incorrect before slow, then by
// time), pairs by increasing rank sum so that many distinct kernels appear
// before any one repeats much. A side is what the model said (saidKey): the
// same completion twice is one candidate.
func (b *build) pairs(g *group) []pair {
	var good, bad []export.Evaluation
	for _, r := range g.rows {
		switch {
		case isCorrect(r):
			good = append(good, r)
		case sayNothing(r):
		default:
			bad = append(bad, r)
		}
	}
	slices.SortFunc(good, byQuality)
	good = distinct(good, saidKey)
	// Slow correct kernels are rejected candidates too, after the incorrect.
	slices.SortFunc(bad, func(x, y export.Evaluation) int {
		return cmp.Or(x.TS.Compare(y.TS), cmp.Compare(x.EvalID, y.EvalID))
	})
	bad = append(distinct(bad, saidKey), good...)
	good, bad = good[:min(len(good), maxSide)], bad[:min(len(bad), 2*maxSide)]
	var ps []pair
	for i, c := range good {
		for j, r := range bad {
			if b.prefers(c, r) {
				ps = append(ps, pair{g, c, r, i, j})
			}
		}
	}
	slices.SortFunc(ps, func(x, y pair) int { return cmp.Or(cmp.Compare(x.i+x.j, y.i+y.j), cmp.Compare(x.i, y.i)) })
	return ps
}

// prefers reports whether correct kernel c is preferred to r: r is
// incorrect, or correct and slower by the margin.
func (b *build) prefers(c, r export.Evaluation) bool {
	if c.CodeHash == r.CodeHash && c.Code == r.Code {
		return false
	}
	if !isCorrect(r) {
		return true
	}
	return c.Speedup != nil && r.Speedup != nil && *r.Speedup > 0 &&
		*c.Speedup >= (1+b.spec.MinMargin)**r.Speedup
}

// sayNothing: harness and task errors tell nothing about the kernel.
func sayNothing(r export.Evaluation) bool {
	return r.Status == string(eval.StatusHarnessError) || r.TaskError != ""
}
