package dataset

import (
	"slices"

	"github.com/kernelgate/kernelgate/export"
)

// sftRow is one supervised example: the prompt and the best kernel.
type sftRow struct {
	Messages []Message `parquet:"messages,list"` // user prompt, assistant answer
	TaskID   string    `parquet:"task_id"`
	EvalID   string    `parquet:"eval_id"`
	Speedup  *float64  `parquet:"speedup,optional"`
	CodeHash string    `parquet:"code_hash"`
}

// sft writes sft.parquet: per task, the top-k correct kernels (distinct
// code hashes, highest speedup first; ties: the earliest).
func (b *build) sft() error {
	gs, err := b.groups(false)
	if err != nil {
		return err
	}
	var rows []sftRow
	for _, g := range gs {
		var ok []export.Evaluation
		for _, r := range g.rows {
			if isCorrect(r) {
				ok = append(ok, r)
			}
		}
		slices.SortFunc(ok, byQuality)
		ok = distinct(ok, codeKey)
		for _, r := range ok[:min(len(ok), b.spec.TopK)] {
			rows = append(rows, sftRow{
				Messages: append(slices.Clone(g.prompt), answer(r.Code)...),
				TaskID:   r.TaskID, EvalID: r.EvalID, Speedup: r.Speedup, CodeHash: r.CodeHash,
			})
		}
	}
	return output(b, "sft.parquet", rows)
}
