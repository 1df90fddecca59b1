package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
)

// Input that two readers could read two ways is refused, not guessed at: a
// JSON object with a key twice (encoding/json keeps the last; a proxy, a
// WAF or a log reader may keep the first) and a query parameter given twice
// (gin's c.Query keeps the first).

// duplicateKeyError names a key that appears twice in one object.
type duplicateKeyError struct {
	path string // dotted from the top: "options.timeout_s", "prompts[2].role"
}

func (e *duplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key %q: each key may appear once in an object", e.path)
}

// checkDuplicateKeys returns a *duplicateKeyError for the first key that
// appears twice in one object of data. data must be valid JSON whose
// nesting encoding/json accepted (decodeStrict calls it after Decode), so
// the recursion is as deep as Decode allowed.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkKeys(dec, "")
}

func walkKeys(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if seen[key] {
				return &duplicateKeyError{path: sub}
			}
			seen[key] = true
			if err := walkKeys(dec, sub); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

// rejectRepeatedQuery answers 400 to a request that gives a query
// parameter more than once (?limit=1&limit=2): no operation takes a list
// in its query string.
func (s *Server) rejectRepeatedQuery(c *gin.Context) {
	var repeated []string
	for k, v := range c.Request.URL.Query() {
		if len(v) > 1 {
			repeated = append(repeated, k)
		}
	}
	if len(repeated) > 0 {
		sort.Strings(repeated)
		abort(c, newError(CodeInvalidRequest, repeated[0], "query parameter %s given more than once; give each once",
			strings.Join(repeated, ", ")))
		return
	}
	c.Next()
}
