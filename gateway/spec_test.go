package gateway

import (
	"reflect"
	"testing"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// The gateway's request and answer types are specified twice (here,
// openapi.yaml); they must not drift apart.
func TestSchemasMatchGoTypes(t *testing.T) {
	doc := loadSpec(t)
	for _, c := range []struct {
		schema string
		typ    reflect.Type
	}{
		{"RewardRequest", reflect.TypeFor[rewardRequest]()},
		{"Batch", reflect.TypeFor[batchResponse]()},
		{"BatchRef", reflect.TypeFor[batchRef]()},
		{"BatchLine", reflect.TypeFor[batchLine]()},
		{"EvaluationRequest", reflect.TypeFor[evaluationRequest]()},
		{"Evaluation", reflect.TypeFor[evaluationResponse]()},
		{"Error", reflect.TypeFor[apiError]()},
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
		kgtest.SchemaMatches(t, doc, c.schema, c.typ)
	}
}
