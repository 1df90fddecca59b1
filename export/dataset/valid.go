package dataset

import "github.com/kernelgate/kernelgate/export"

// readsEvaluations reports whether format f's outputs come from the
// evaluations table (and so leave invalid rows out unless asked).
func readsEvaluations(f Format) bool {
	switch f {
	case FormatSFT, FormatDPO, FormatTrajectories, FormatArrow:
		return true
	}
	return false
}

// keepEvaluation is the evaluations filter of every export: the rows the
// filters match, less those the API answered valid=false (counted in the
// manifest's skipped; --include-invalid keeps them). A trainer drops such
// a sample, so no export hands it one.
func (b *build) keepEvaluation(r export.Evaluation) bool {
	f := b.spec.Filter
	if !f.evaluation(r) {
		return false
	}
	if !f.IncludeInvalid && !r.IsValid() {
		b.m.Skipped[SkipInvalid]++
		return false
	}
	return true
}
