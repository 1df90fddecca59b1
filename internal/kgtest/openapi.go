package kgtest

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// SchemaMatches fails t unless openapi.yaml's component schema has exactly
// the JSON field names of typ as properties: a type specified twice (Go and
// the spec) must not drift apart.
func SchemaMatches(t testing.TB, doc *openapi3.T, schema string, typ reflect.Type) {
	t.Helper()
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		t.Errorf("openapi.yaml has no schema %s", schema)
		return
	}
	props := slices.Sorted(maps.Keys(ref.Value.Properties))
	var fields []string
	for f := range typ.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "" && name != "-" {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	if !slices.Equal(props, fields) {
		t.Errorf("%s: schema properties %v, Go fields %v", schema, props, fields)
	}
}
