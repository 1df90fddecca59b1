package llm

import (
	"errors"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/harness/submission"
	"github.com/kernelgate/kernelgate/rollout"
)

// Extractor is rollout.Extractor over the gateway's reading of completions
// (harness/submission) and this package's edits, so the engine (which must
// not import rollout/llm) reads an answer as the gateway reads the same
// text sent as a completion: the same code, the same code_hash, the same
// verdict words.
type Extractor struct{}

var _ rollout.Extractor = Extractor{}

// Code is submission.Extract's code.
func (Extractor) Code(text string) (string, bool) {
	code, _, err := submission.Extract(text)
	return code, err == nil
}

// Verdict is submission.Word.
func (Extractor) Verdict(text, finishReason string, v eval.Verdict) eval.Verdict {
	return submission.Word(text, finishReason, v)
}

// Edits is ExtractEdits, except that an answer with no edit at all is no
// error: the engine then takes a whole-file answer at its word.
func (Extractor) Edits(text string) ([]rollout.Edit, error) {
	edits, err := ExtractEdits(text)
	if errors.Is(err, ErrNoEdits) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]rollout.Edit, len(edits))
	for i, e := range edits {
		out[i] = rollout.Edit{Search: e.Search, Replace: e.Replace}
	}
	return out, nil
}

// Apply is ApplyEdits, its result in submission.Code's form: an edit that
// leaves blank lines at the end (or at the start) gives the code, and so the
// code_hash, that the same kernel sent in a completion gives.
func (Extractor) Apply(code string, edits []rollout.Edit) (string, error) {
	in := make([]Edit, len(edits))
	for i, e := range edits {
		in[i] = Edit{Search: e.Search, Replace: e.Replace}
	}
	out, err := ApplyEdits(code, in)
	if err != nil {
		return "", err
	}
	return submission.Code(out), nil
}

// NoCodeReason says why Code found nothing ("" when it found code), for an
// engine that wants to log more than "no code".
func (Extractor) NoCodeReason(text string) string {
	if _, _, err := submission.Extract(text); err != nil {
		return err.Error()
	}
	return ""
}
