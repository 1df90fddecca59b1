package gateway

import (
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// Searches and reading skills need scope search; retiring a skill needs admin.
func TestSearchAndSkillScopes(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"trainer": "reward", "searcher": "search", "ops": "admin"})
	searches := newFakeSearches()
	mem := &fakeSkills{rules: []skills.Rule{testRule("sk-a", export.SkillActive)}}
	h := New(Config{}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t), Searches: searches, Skills: mem}).Handler()
	id := startSearchForTest(t, searches)
	searches.end(id, "done")
	start := []byte(`{"task_id":"ci/1_add_relu","steps":2}`)
	retire := []byte(`{"reason":"test"}`)
	for _, c := range []struct {
		key          string
		method, path string
		spec         string
		body         []byte
		status       int
	}{
		{"trainer", "POST", "/v1/searches", "/v1/searches", start, 403},
		{"trainer", "GET", "/v1/searches/" + id, "/v1/searches/{id}", nil, 403},
		{"trainer", "DELETE", "/v1/searches/" + id, "/v1/searches/{id}", nil, 403},
		{"trainer", "GET", "/v1/searches/" + id + "/events", "/v1/searches/{id}/events", nil, 403},
		{"trainer", "GET", "/v1/skills", "/v1/skills", nil, 403},
		{"ops", "POST", "/v1/searches", "/v1/searches", start, 403},
		{"searcher", "POST", "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", retire, 403},
		{"", "GET", "/v1/skills", "/v1/skills", nil, 401},
		{"searcher", "POST", "/v1/searches", "/v1/searches", start, 202},
		{"searcher", "GET", "/v1/searches/" + id, "/v1/searches/{id}", nil, 200},
		{"searcher", "DELETE", "/v1/searches/" + id, "/v1/searches/{id}", nil, 200},
		{"searcher", "GET", "/v1/skills", "/v1/skills", nil, 200},
		{"ops", "POST", "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", retire, 200},
	} {
		t.Run(c.key+" "+c.method+" "+c.path, func(t *testing.T) {
			auth := ""
			if c.key != "" {
				auth = "Bearer " + keys[c.key]
			}
			rec := request(t, h, c.method, c.path, auth, c.body)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if !strings.HasSuffix(c.path, "/events") || rec.Code != 200 {
				checkSpec(t, c.method, c.spec, rec)
			}
		})
	}
	if len(searches.started) != 2 || len(mem.retired) != 1 {
		t.Errorf("refused calls reached the services: %d searches, %v retired", len(searches.started), mem.retired)
	}
	for route, want := range map[string]scopeRule{
		"GET /v1/searches/:id/events":  {path: "/v1/searches", scope: apikey.Search},
		"DELETE /v1/searches/:id":      {path: "/v1/searches", scope: apikey.Search},
		"GET /v1/skills":               {method: "GET", path: "/v1/skills", scope: apikey.Search},
		"POST /v1/skills/:id/retire":   {path: "/v1/skills", scope: apikey.Admin},
		"DELETE /v1/skills/:id/retire": {path: "/v1/skills", scope: apikey.Admin},
	} {
		method, path, _ := strings.Cut(route, " ")
		if got, _ := scopeFor(method, path); got != want {
			t.Errorf("%s: %+v, want %+v", route, got, want)
		}
	}
}
