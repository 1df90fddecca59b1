package skills

import (
	"regexp"
	"strings"
)

// The harness already strips names and numbers from error signatures
// (docs/protocol.md, error_signature), but signatures also come from older
// logs, other harness versions and tests, so the memory normalises again: the
// same mistake on different tasks must count as one signature. Normalise is
// idempotent, so normalised signatures can be normalised again safely.
var (
	sigPath   = regexp.MustCompile(`(?:[A-Za-z]:)?(?:/[\w.\-]+)+/?`)
	sigHex    = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	sigSize   = regexp.MustCompile(`torch\.Size\(\[[^\]]*\]\)`)
	sigShape  = regexp.MustCompile(`[\[(]\s*-?\d+(?:\s*,\s*-?\d+)*\s*,?\s*[\])]`)
	sigQuoted = regexp.MustCompile(`'([^'\n]*)'|"([^"\n]*)"|` + "`([^`\\n]*)`")
	sigIdent  = regexp.MustCompile(`^[A-Za-z_][\w.]*(?:\(\))?$`)
	// A token is a number in scientific notation or a run of word characters
	// and dots; only tokens that are wholly numbers become <n>, so float32 or
	// tl.int64 survive.
	sigToken       = regexp.MustCompile(`\d+(?:\.\d+)?[eE][+-]?\d+|[\w.]+`)
	sigNumber      = regexp.MustCompile(`^\d+(?:\.\d+)*(?:[eE][+-]?\d+)?$`)
	sigSpace       = regexp.MustCompile(`\s+`)
	sigPlaceholder = regexp.MustCompile(`^<\w+>$`)
)

// maxSignature matches the harness's limit.
const maxSignature = 300

// Normalise reduces an error signature ("ErrorClass: message") to the part
// that names the mistake: file paths, hex addresses, shapes, quoted
// identifiers, numbers (line numbers included) and runs of whitespace are
// replaced by placeholders.
func Normalise(sig string) string {
	// Invalid bytes go first, so that nothing removed later joins two
	// tokens into a new one (the result must be stable).
	s := strings.TrimSpace(strings.ToValidUTF8(sig, ""))
	s = sigPath.ReplaceAllString(s, "<path>")
	s = sigHex.ReplaceAllString(s, "<hex>")
	s = sigSize.ReplaceAllString(s, "<shape>")
	s = sigShape.ReplaceAllString(s, "<shape>")
	s = sigToken.ReplaceAllStringFunc(s, func(tok string) string {
		trimmed := strings.TrimRight(tok, ".")
		if trimmed != "" && sigNumber.MatchString(trimmed) {
			return "<n>" + tok[len(trimmed):]
		}
		return tok
	})
	s = sigQuoted.ReplaceAllStringFunc(s, func(q string) string {
		inner := q[1 : len(q)-1]
		if sigIdent.MatchString(inner) {
			return "<name>"
		}
		if sigPlaceholder.MatchString(inner) {
			return inner // a quoted path, shape or number, already replaced
		}
		return q // not a name (a dtype list, a message)
	})
	s = sigSpace.ReplaceAllString(s, " ")
	s = strings.TrimSpace(s)
	if len(s) > maxSignature {
		// Cut between words: a token cut in half could normalise again
		// differently ("0A" cut to "0" is a number).
		s = truncate(s, maxSignature+1)
		if i := strings.LastIndexByte(s, ' '); i > 0 {
			s = s[:i]
		} else {
			s = truncate(s, maxSignature)
		}
	}
	return strings.TrimSpace(s)
}

// ErrorClass is the exception type of a signature ("NameError" of
// "NameError: ..."): rules of the same class are the candidates for the LLM
// duplicate check.
func ErrorClass(sig string) string {
	class, _, ok := strings.Cut(sig, ":")
	if !ok {
		return strings.TrimSpace(sig)
	}
	return strings.TrimSpace(class)
}
