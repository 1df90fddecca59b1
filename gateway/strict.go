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
// WAF or a log reader may keep the first), a field sent as null where
// openapi.yaml does not say nullable (encoding/json reads it as absent) and
// a query parameter given twice (gin's c.Query keeps the first).

// duplicateKeyError names a key that appears twice in one object.
type duplicateKeyError struct {
	path string // dotted from the top: "options.timeout_s", "prompts[2].role"
	null bool   // not a duplicate: a member whose value is null
	item bool   // with null: an array's item
}

func (e *duplicateKeyError) Error() string {
	if e.null && e.item {
		return fmt.Sprintf("%s is null: every item of the list must be a value", e.path)
	}
	if e.null {
		return fmt.Sprintf("%s is null: leave the field out instead", e.path)
	}
	return fmt.Sprintf("duplicate key %q: each key may appear once in an object", e.path)
}

// nullable are the request fields openapi.yaml declares nullable: null is
// their own value (the harness's default tolerance, the model's default
// temperature, a finish reason the inference server did not say), not
// "absent".
var nullable = map[string]bool{"atol": true, "rtol": true, "temperature": true, "finish_reason": true}

// nullableItems are the request lists whose items openapi.yaml declares
// nullable: a finish reason the inference server did not say. encoding/json
// reads a null item of any other list as its zero value (a null code as an
// empty one), so null is refused there.
var nullableItems = map[string]bool{"finish_reasons": true}

// checkDuplicateKeys returns a *duplicateKeyError for the first key that
// appears twice in one object of data, or whose value is null (nullable
// keys aside). data must be valid JSON whose
// nesting encoding/json accepted (decodeStrict calls it after Decode), so
// the recursion is as deep as Decode allowed.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	_, err := walkKeys(dec, "")
	return err
}

// walkKeys reads one value from dec; null says it was JSON null.
func walkKeys(dec *json.Decoder, path string) (null bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case nil:
		return true, nil
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false, err
			}
			key, _ := kt.(string)
			sub := key
			if path != "" {
				sub = path + "." + key
			}
			if seen[key] {
				return false, &duplicateKeyError{path: sub}
			}
			seen[key] = true
			null, err := walkKeys(dec, sub)
			if err != nil {
				return false, err
			}
			if null && !nullable[key] {
				return false, &duplicateKeyError{path: sub, null: true}
			}
		}
		_, err = dec.Token() // '}'
		return false, err
	case json.Delim('['):
		list := path[strings.LastIndexByte(path, '.')+1:]
		list = list[:strings.IndexByte(list+"[", '[')]
		for i := 0; dec.More(); i++ {
			item := fmt.Sprintf("%s[%d]", path, i)
			null, err := walkKeys(dec, item)
			if err != nil {
				return false, err
			}
			if null && !nullableItems[list] {
				return false, &duplicateKeyError{path: item, null: true, item: true}
			}
		}
		_, err = dec.Token() // ']'
		return false, err
	}
	return false, nil
}

// specSpace is the white space of openapi.yaml's patterns for "not blank"
// and "several lines" ([^ \t\n\r\v\f]): ASCII only, because JSON Schema
// engines disagree on which Unicode characters \s covers, and the server
// must refuse exactly what the contract says it refuses.
const specSpace = " \t\n\r\v\f"

// trimSpec trims specSpace from both ends of s.
func trimSpec(s string) string { return strings.Trim(s, specSpace) }

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
