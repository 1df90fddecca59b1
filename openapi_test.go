package kernelgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	return doc
}

// The verdict is specified twice (eval.Verdict, the Verdict schema); they must
// not drift apart.
func TestVerdictSchemaMatchesHarnessTypes(t *testing.T) {
	doc := loadSpec(t)
	for _, c := range []struct {
		schema string
		typ    reflect.Type
	}{
		{"Verdict", reflect.TypeFor[eval.Verdict]()},
		{"Runtime", reflect.TypeFor[eval.Runtime]()},
		{"Tolerance", reflect.TypeFor[eval.Tolerance]()},
		{"Env", reflect.TypeFor[eval.Env]()},
		{"Options", reflect.TypeFor[eval.Options]()},
		{"TaskInfo", reflect.TypeFor[eval.TaskInfo]()},
		{"ReferenceError", reflect.TypeFor[eval.ReferenceError]()},
	} {
		kgtest.SchemaMatches(t, doc, c.schema, c.typ)
	}
	v := doc.Components.Schemas["Verdict"].Value
	var statuses []string
	for _, s := range eval.Statuses {
		statuses = append(statuses, string(s))
	}
	if got := enum(v.Properties["status"].Value); !slices.Equal(got, statuses) {
		t.Errorf("status enum %v, harness %v", got, statuses)
	}
	if got := enum(v.Properties["hack_flags"].Value.Items.Value); !slices.Equal(got, eval.HackFlags) {
		t.Errorf("hack_flags enum %v, harness %v", got, eval.HackFlags)
	}
}

func enum(s *openapi3.Schema) []string {
	var out []string
	for _, e := range s.Enum {
		out = append(out, e.(string))
	}
	return out
}

// The golden verdict (harness/testdata/protocol/result.json) validates; broken ones do not.
func TestGoldenVerdictValidates(t *testing.T) {
	doc := loadSpec(t)
	schema := doc.Components.Schemas["Verdict"].Value
	type record struct {
		Verdict map[string]any `json:"verdict"`
	}
	var rec record // result.json's, which the cases below change
	// result.task_check.json (schema 1.5): a task check's verdict, with how far its
	// reference is from its exact answer.
	for _, name := range []string{"result.task_check.json", "result.json"} {
		raw, err := os.ReadFile("harness/testdata/protocol/" + name)
		if err != nil {
			t.Fatal(err)
		}
		rec = record{} // Unmarshal into a filled map would merge the two
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(rec.Verdict); err != nil {
			t.Fatalf("golden verdict %s does not validate: %v", name, err)
		}
	}
	// Schema 1.4: a tolerance the task file set.
	declared := maps.Clone(rec.Verdict)
	declared["tolerance"] = map[string]any{"atol": 0.01, "rtol": 0.032, "dtype": "bfloat16", "source": "task"}
	if err := schema.VisitJSON(declared); err != nil {
		t.Fatalf("a verdict with the task's own tolerance does not validate: %v", err)
	}
	// Schema 1.6: a reference error measured on a held-out set.
	onHeld := maps.Clone(rec.Verdict)
	onHeld["task_info"] = taskInfoWith(map[string]any{"used": 0.3, "held": 0, "output": 0, "index": []any{1, 2},
		"note": "measured on the held-out inputs only: a float64 copy of one call needs about 32768 MiB, more than 24576"})
	if err := schema.VisitJSON(onHeld); err != nil {
		t.Fatalf("a reference error measured on a held-out set does not validate: %v", err)
	}
	for name, mutate := range map[string]func(map[string]any){
		"negative held-out set": func(v map[string]any) {
			v["task_info"] = taskInfoWith(map[string]any{"used": 0.3, "held": -1})
		},
		"negative reference error": func(v map[string]any) {
			v["task_info"] = taskInfoWith(map[string]any{"used": -0.5})
		},
		"unknown status":    func(v map[string]any) { v["status"] = "fast" },
		"unknown hack flag": func(v map[string]any) { v["hack_flags"] = []any{"made_up"} },
		"missing speedup":   func(v map[string]any) { delete(v, "speedup") },
		"coverage above 1":  func(v map[string]any) { v["coverage"] = 1.5 },
		"unknown tolerance source": func(v map[string]any) {
			v["tolerance"] = map[string]any{"atol": 0.01, "rtol": 0.032, "dtype": "bfloat16", "source": "guess"}
		},
	} {
		bad := maps.Clone(rec.Verdict)
		mutate(bad)
		if schema.VisitJSON(bad) == nil {
			t.Errorf("%s: validated, want an error", name)
		}
	}
}

// Every operation needs a bearer key except the health probes and the
// contract itself, and every one that does declares the answers the auth
// middleware gives: 401, 403 and 429 (gateway/auth.go, gateway/ratelimit.go).
func TestAuthResponsesDeclared(t *testing.T) {
	doc := loadSpec(t)
	if doc.Components.SecuritySchemes["bearer"] == nil || len(doc.Security) != 1 || doc.Security[0]["bearer"] == nil {
		t.Fatal("no global bearer security")
	}
	open := map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /openapi.yaml": true, "GET /openapi.json": true,
		"GET /ui/{page}": true, "POST /ui/login": true, // the dashboard: its reads carry the key (gateway/ui)
		"GET /ui/login": true, // no page: /ui/{page} answers it 404
		"GET /":         true} // a redirect to /ui/
	want := map[int]string{
		401: "#/components/responses/Unauthorized",
		403: "#/components/responses/Forbidden",
		429: "#/components/responses/TooMany",
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			isOpen := op.Security != nil && len(*op.Security) == 0
			if isOpen != open[name] {
				t.Errorf("%s: open %v, want %v", name, isOpen, open[name])
			}
			if isOpen {
				continue
			}
			for code, ref := range want {
				r := op.Responses.Status(code)
				if r == nil || r.Ref != ref {
					t.Errorf("%s: %d should be %s", name, code, ref)
				}
			}
		}
	}
}

// GET /openapi.json serves OpenAPIJSON: the same document as openapi.yaml,
// as kin-openapi reads each.
func TestOpenAPIJSONIsTheSpec(t *testing.T) {
	fromYAML := loadSpec(t)
	fromJSON, err := openapi3.NewLoader().LoadFromData(OpenAPIJSON)
	if err != nil {
		t.Fatalf("OpenAPIJSON does not load: %v", err)
	}
	if !json.Valid(OpenAPIJSON) || OpenAPIJSON[0] != '{' {
		t.Fatalf("OpenAPIJSON is not a JSON object: %.100s", OpenAPIJSON)
	}
	y, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(fromJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(y, j) {
		t.Fatalf("openapi.json differs from openapi.yaml:\n%s", firstDiff(y, j))
	}
	if len(fromJSON.Paths.Map()) != len(fromYAML.Paths.Map()) || fromJSON.Paths.Find("/openapi.json") == nil {
		t.Fatalf("paths: %d from JSON, %d from YAML", len(fromJSON.Paths.Map()), len(fromYAML.Paths.Map()))
	}
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d: ...%s\nvs ...%s", i, a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}

func TestYAMLToJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a: 1\nb: [x, 2.5, true, null]\n", `{"a":1,"b":["x",2.5,true,null]}`},
		{"responses:\n  200: {description: ok}\n", `{"responses":{"200":{"description":"ok"}}}`},
		{"v: \"1\"\nw: '0.1'\n", `{"v":"1","w":"0.1"}`},
		{"d: {nested: [{k: v}]}\n", `{"d":{"nested":[{"k":"v"}]}}`},
	} {
		got, err := yamlToJSON([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"a: [\n", "? [a, b]\n: c\n"} {
		if got, err := yamlToJSON([]byte(bad)); err == nil {
			t.Errorf("%q: %s, want an error", bad, got)
		}
	}
}

// taskInfoWith is a task check's task_info with the reference error given.
func taskInfoWith(referenceError map[string]any) map[string]any {
	return map[string]any{"name": "", "tags": []any{}, "outputs": []any{}, "input_bytes": nil,
		"param_bytes": nil, "output_bytes": nil, "flops": nil, "meta_error": "",
		"reference_error": referenceError}
}
