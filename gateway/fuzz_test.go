package gateway

import "testing"

// The request body is untrusted: whatever it holds, parsing must not panic
// and every refusal must come from the error table.
func FuzzParseRewardRequest(f *testing.F) {
	for _, s := range []string{
		`{"reference":"x","codes":["a"]}`,
		`{"reference":"x","completions":["a"],"options":{"seeds":2,"atol":null},"wait_s":1.5}`,
		`{"task_id":"1","codes":[]}`,
		`{"task_id":"ci/1_add_relu","completions":["a"]}`,
		`{"task_id":"","completions":["a"]}`,
		`{"reference":"x","codes":["a"],"options":{"seeds":0,"max_iters":1}}`,
		`{"reference":"x","codes":["a"],"reward_fn":"kevin","options":null}`,
		`{`, `null`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	cfg := Config{MaxItems: 4}.withDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, aerr := parseRewardRequest(body, cfg)
		if aerr != nil {
			if _, ok := errorTable[aerr.Code]; !ok || aerr.Code == CodeInternal || aerr.Message == "" {
				t.Fatalf("error outside the table: %+v", aerr)
			}
			return
		}
		if len(spec.items) == 0 || len(spec.items) > cfg.MaxItems || spec.options.Validate() != nil || spec.wait < 0 ||
			(spec.task.Source == "") == (spec.taskID == "") { // exactly one: an inline source, or an id the handler resolves
			t.Fatalf("accepted an invalid request: %+v", spec)
		}
	})
}

func FuzzParseEvaluationRequest(f *testing.F) {
	for _, s := range []string{
		`{"reference":"x","code":"a"}`,
		`{"reference":"x","completion":"a","options":{"seeds":2},"wait_s":0,"cache":false}`,
		`{"reference":"x","code":"a","completion":"b"}`,
		`{"reference":"x"}`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	cfg := Config{}.withDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, aerr := parseEvaluationRequest(body, cfg)
		if aerr != nil {
			if _, ok := errorTable[aerr.Code]; !ok || aerr.Code == CodeInternal || aerr.Message == "" {
				t.Fatalf("error outside the table: %+v", aerr)
			}
			return
		}
		if len(spec.items) != 1 || spec.options.Validate() != nil || spec.wait < 0 || spec.task.Source == "" {
			t.Fatalf("accepted an invalid request: %+v", spec)
		}
	})
}
