// Package kernelgate holds what belongs to the whole project rather than to one
// part: the HTTP contract, openapi.yaml, embedded so the gateway can serve it and
// tests can hold handlers and the harness's types to it.
package kernelgate

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v4"
)

// OpenAPI is openapi.yaml, the HTTP contract.
//
//go:embed openapi.yaml
var OpenAPI []byte

// OpenAPIJSON is OpenAPI as JSON (GET /openapi.json), converted once when
// the program starts; a spec that does not convert is a build mistake that
// openapi_test.go catches, so it panics.
var OpenAPIJSON = mustJSON(OpenAPI)

func mustJSON(y []byte) []byte {
	b, err := yamlToJSON(y)
	if err != nil {
		panic(err)
	}
	return b
}

// yamlToJSON converts a YAML document to JSON with the parser kin-openapi
// uses, so both read the same document.
func yamlToJSON(y []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(y, &v); err != nil {
		return nil, fmt.Errorf("kernelgate: openapi.yaml: %w", err)
	}
	v, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("kernelgate: openapi.yaml as JSON: %w", err)
	}
	return b, nil
}

// jsonValue makes a decoded YAML value encodable as JSON: mapping keys must
// be strings (a bare 200: would decode as an int).
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			y, err := jsonValue(x)
			if err != nil {
				return nil, err
			}
			v[k] = y
		}
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			y, err := jsonValue(x)
			if err != nil {
				return nil, err
			}
			switch k.(type) {
			case string, int, int64, uint64, bool, float64:
				m[fmt.Sprint(k)] = y
			default:
				return nil, fmt.Errorf("kernelgate: openapi.yaml: mapping key %v (%T) has no JSON form", k, k)
			}
		}
		return m, nil
	case []any:
		for i, x := range v {
			y, err := jsonValue(x)
			if err != nil {
				return nil, err
			}
			v[i] = y
		}
		return v, nil
	}
	return v, nil
}
