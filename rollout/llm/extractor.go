package llm

import (
	"errors"

	"github.com/kernelgate/kernelgate/rollout"
)

// Extractor is rollout.Extractor over this package's parsers, so the engine
// (which must not import rollout/llm) reads completions the way the prompts
// ask models to write them.
type Extractor struct{}

var _ rollout.Extractor = Extractor{}

// Code is ExtractCode.
func (Extractor) Code(text string) (string, bool) { return ExtractCode(text) }

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

// Apply is ApplyEdits.
func (Extractor) Apply(code string, edits []rollout.Edit) (string, error) {
	in := make([]Edit, len(edits))
	for i, e := range edits {
		in[i] = Edit{Search: e.Search, Replace: e.Replace}
	}
	return ApplyEdits(code, in)
}

// NoCodeReason says why Code found nothing (NoCodeReason), for an engine
// that wants to log more than "no code".
func (Extractor) NoCodeReason(text string) string { return NoCodeReason(text) }
