package gateway

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kernelgate/kernelgate"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/redteam"
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
		{"SearchList", reflect.TypeFor[searchList]()},
		{"RedteamRequest", reflect.TypeFor[redteamRequest]()},
		{"RedteamTask", reflect.TypeFor[redteamTaskRequest]()},
		{"RedteamRun", reflect.TypeFor[redteamView]()},
		{"RedteamReport", reflect.TypeFor[redteam.Report]()},
		{"RedteamClass", reflect.TypeFor[redteam.ClassReport]()},
		{"RedteamOutcome", reflect.TypeFor[redteam.Outcome]()},
	} {
		kgtest.SchemaMatches(t, doc, c.schema, c.typ)
	}
}

// The contract is served as YAML and JSON, without a key even where keys
// are enforced, and the JSON is the document the YAML is.
func TestOpenAPIServed(t *testing.T) {
	f, _ := keyFile(t, map[string]string{"trainer": "reward"})
	h := New(Config{}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)}).Handler()
	for path, want := range map[string][]byte{"/openapi.yaml": kernelgate.OpenAPI, "/openapi.json": kernelgate.OpenAPIJSON} {
		rec := request(t, h, "GET", path, "", nil)
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Fatalf("%s: %d, %d bytes, want 200 with the embedded %d", path, rec.Code, rec.Body.Len(), len(want))
		}
		if path == "/openapi.json" {
			checkSpec(t, "GET", path, rec)
		}
	}
	rec := request(t, h, "GET", "/openapi.json", "", nil)
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("/openapi.json does not load: %v", err)
	}
	if got, want := len(doc.Paths.Map()), len(loadSpec(t).Paths.Map()); got != want || doc.Paths.Find("/v1/searches") == nil {
		t.Errorf("/openapi.json has %d paths, openapi.yaml %d", got, want)
	}
}
