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
// an incorrect one, or a correct one slower by the margin (rejected).
func (b *build) dpo() error {
	gs, err := b.groups(true)
	if err != nil {
		return err
	}
	var rows []dpoRow
	for _, g := range gs {
		for _, p := range b.pairs(g.rows) {
			c, r := p[0], p[1]
			rows = append(rows, dpoRow{
				Prompt: g.prompt, Chosen: reply(c), Rejected: reply(r), TaskID: g.taskID,
				ChosenEvalID: c.EvalID, RejectedEvalID: r.EvalID,
				ChosenSpeedup: c.Speedup, RejectedSpeedup: r.Speedup, RejectedStatus: r.Status,
			})
		}
	}
	return output(b, "dpo.parquet", rows)
}

// pairs picks up to MaxPairsPerTask (chosen, rejected) pairs of one task,
// deterministically: both sides ranked (best chosen first; rejected
// incorrect before slow, then by time), pairs taken by increasing rank sum
// so that many distinct kernels appear before any one repeats much.
func (b *build) pairs(rows []export.Evaluation) [][2]export.Evaluation {
	var good, bad []export.Evaluation
	for _, r := range rows {
		switch {
		case isCorrect(r):
			good = append(good, r)
		case sayNothing(r):
		default:
			bad = append(bad, r)
		}
	}
	slices.SortFunc(good, byQuality)
	good = distinct(good)
	// Slow correct kernels are rejected candidates too, after the incorrect.
	slices.SortFunc(bad, func(x, y export.Evaluation) int {
		return cmp.Or(x.TS.Compare(y.TS), cmp.Compare(x.EvalID, y.EvalID))
	})
	bad = append(distinct(bad), good...)
	good, bad = good[:min(len(good), maxSide)], bad[:min(len(bad), 2*maxSide)]
	type pair struct{ i, j int }
	var ps []pair
	for i, c := range good {
		for j, r := range bad {
			if b.prefers(c, r) {
				ps = append(ps, pair{i, j})
			}
		}
	}
	slices.SortFunc(ps, func(x, y pair) int { return cmp.Or(cmp.Compare(x.i+x.j, y.i+y.j), cmp.Compare(x.i, y.i)) })
	out := make([][2]export.Evaluation, 0, min(len(ps), b.spec.MaxPairsPerTask))
	for _, p := range ps[:min(len(ps), b.spec.MaxPairsPerTask)] {
		out = append(out, [2]export.Evaluation{good[p.i], bad[p.j]})
	}
	return out
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
