package gateway

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The request and answer types of the task, episode and OpenRLHF endpoints
// are specified twice (here, openapi.yaml); they must not drift apart.
func TestSchemasMatchGoTypes(t *testing.T) {
	doc := loadSpec(t)
	for _, c := range []struct {
		schema string
		typ    reflect.Type
	}{
		{"TaskRequest", reflect.TypeFor[taskRequest]()},
		{"Task", reflect.TypeFor[taskView]()},
		{"TaskList", reflect.TypeFor[taskList]()},
		{"EpisodeRequest", reflect.TypeFor[episodeRequest]()},
		{"EpisodeStart", reflect.TypeFor[episodeStart]()},
		{"StepRequest", reflect.TypeFor[stepRequest]()},
		{"StepObservation", reflect.TypeFor[stepObservation]()},
		{"StepResponse", reflect.TypeFor[stepResponse]()},
		{"EpisodeStep", reflect.TypeFor[stepView]()},
		{"Episode", reflect.TypeFor[episodeView]()},
		{"OpenRLHFRequest", reflect.TypeFor[openRLHFRequest]()},
		{"OpenRLHFResponse", reflect.TypeFor[openRLHFResponse]()},
	} {
		ref := doc.Components.Schemas[c.schema]
		if ref == nil {
			t.Errorf("no schema %s", c.schema)
			continue
		}
		var props []string
		for k := range ref.Value.Properties {
			props = append(props, k)
		}
		slices.Sort(props)
		if want := jsonNames(c.typ); !slices.Equal(props, want) {
			t.Errorf("%s: schema properties %v, Go fields %v", c.schema, props, want)
		}
	}
}

func jsonNames(typ reflect.Type) []string {
	var out []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
