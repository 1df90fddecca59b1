package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/export"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// fakeSkills is a hand-written SkillAdmin over a few rules; fail makes
// every call fail as a broken store would.
type fakeSkills struct {
	mu      sync.Mutex
	rules   []skills.Rule
	fail    error
	retired []string // "id: reason"
}

func (f *fakeSkills) Rules(context.Context) ([]skills.Rule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	return append([]skills.Rule(nil), f.rules...), nil
}

func (f *fakeSkills) Retire(_ context.Context, id, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	for i, r := range f.rules {
		if r.ID != id {
			continue
		}
		if !r.Active() {
			return fmt.Errorf("skills.Retire %s: %w", id, skills.ErrRetired)
		}
		r.Version++
		r.Status, r.RetiredReason = export.SkillRetired, "manual: "+reason
		f.rules[i] = r
		f.retired = append(f.retired, id+": "+reason)
		return nil
	}
	return fmt.Errorf("skills.Retire %s: %w", id, skills.ErrNotFound)
}

func testRule(id, status string) skills.Rule {
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return skills.Rule{ID: id, Version: 1, Rule: "You cannot index a tensor with a Python list inside a Triton kernel.",
		Signature: "CompilationError: unsupported tensor index", FailingCode: "x[[0, 1]]", ExampleEvalIDs: []string{"e_1"},
		Torch: "2.11", Triton: "3.6", GPUArch: "sm_90", FirstSeen: t, LastSeen: t, Hits: 3, Status: status,
		SourceSearchID: "s_1", OnOff: skills.OnOff{Used: 4, UsedPass: 3, Omitted: 1}}
}

func skillServer(t *testing.T) (http.Handler, *fakeSkills) {
	t.Helper()
	old := testRule("sk-old", export.SkillRetired)
	old.RetiredReason, old.ExampleEvalIDs = "retired:passed", nil // nil slices as an old store may hold
	f := &fakeSkills{rules: []skills.Rule{testRule("sk-a", export.SkillActive), testRule("sk-b", export.SkillActive), old}}
	return New(Config{}, Deps{Log: kgtest.Logger(t), Skills: f}).Handler(), f
}

func TestSkillSchemasMatchGoTypes(t *testing.T) {
	doc := loadSpec(t)
	kgtest.SchemaMatches(t, doc, "Skill", reflect.TypeFor[skills.Rule]())
	kgtest.SchemaMatches(t, doc, "SkillOnOff", reflect.TypeFor[skills.OnOff]())
	kgtest.SchemaMatches(t, doc, "SkillList", reflect.TypeFor[skillList]())
	kgtest.SchemaMatches(t, doc, "RetireRequest", reflect.TypeFor[retireRequest]())
}

func TestListSkills(t *testing.T) {
	h, _ := skillServer(t)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"sk-a", "sk-b", "sk-old"}},
		{"?status=active", []string{"sk-a", "sk-b"}},
		{"?status=retired", []string{"sk-old"}},
	} {
		var list skillList
		rec := call(t, h, http.MethodGet, "/v1/skills"+c.query, "/v1/skills", nil, &list)
		var ids []string
		for _, r := range list.Skills {
			ids = append(ids, r.ID)
		}
		if rec.Code != http.StatusOK || !reflect.DeepEqual(ids, c.want) {
			t.Errorf("%q: %d %v, want %v", c.query, rec.Code, ids, c.want)
		}
	}
	// An empty memory is an empty list, not null.
	empty := New(Config{}, Deps{Log: kgtest.Logger(t), Skills: &fakeSkills{}}).Handler()
	rec := call(t, empty, http.MethodGet, "/v1/skills", "/v1/skills", nil, nil)
	if !strings.Contains(rec.Body.String(), `"skills":[]`) {
		t.Errorf("empty: %s", rec.Body)
	}
	rec = call(t, h, http.MethodGet, "/v1/skills?status=dead", "/v1/skills", nil, nil)
	wantError(t, rec, 400, CodeInvalidRequest, "status", `got "dead"`)
}

func TestRetireSkill(t *testing.T) {
	h, f := skillServer(t)
	var r skills.Rule
	rec := call(t, h, http.MethodPost, "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "  wrong on sm_90  "}, &r)
	if rec.Code != http.StatusOK || r.ID != "sk-a" || r.Version != 2 || r.Status != export.SkillRetired || r.RetiredReason != "manual: wrong on sm_90" {
		t.Fatalf("%d %+v", rec.Code, r)
	}
	if len(f.retired) != 1 || f.retired[0] != "sk-a: wrong on sm_90" {
		t.Errorf("memory got %v", f.retired)
	}
	for _, c := range []struct {
		name   string
		path   string
		body   any
		status int
		code   Code
		field  string
		want   string
	}{
		{"again", "/v1/skills/sk-a/retire", map[string]any{"reason": "x"}, 409, CodeSkillRetired, "id", "already retired"},
		{"unknown", "/v1/skills/sk-none/retire", map[string]any{"reason": "x"}, 404, CodeSkillNotFound, "id", `no skill "sk-none"`},
		{"no reason", "/v1/skills/sk-b/retire", map[string]any{}, 400, CodeInvalidRequest, "reason", "reason is required"},
		{"blank reason", "/v1/skills/sk-b/retire", map[string]any{"reason": " \n"}, 400, CodeInvalidRequest, "reason", "reason is required"},
		{"long reason", "/v1/skills/sk-b/retire", map[string]any{"reason": strings.Repeat("x", 1001)}, 400, CodeInvalidRequest, "reason", "at most 1000"},
		{"unknown field", "/v1/skills/sk-b/retire", map[string]any{"reason": "x", "by": "me"}, 400, CodeBadJSON, "by", "unknown field"},
		{"malformed", "/v1/skills/sk-b/retire", []byte("{"), 400, CodeBadJSON, "", "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := call(t, h, http.MethodPost, c.path, "/v1/skills/{id}/retire", c.body, nil)
			wantError(t, rec, c.status, c.code, c.field, c.want)
		})
	}
	if len(f.retired) != 1 {
		t.Errorf("refused requests retired rules: %v", f.retired)
	}
}

func TestSkillsUnavailable(t *testing.T) {
	off := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	rec := call(t, off, http.MethodGet, "/v1/skills", "/v1/skills", nil, nil)
	wantError(t, rec, 503, CodeNotReady, "", "skills are not configured")
	rec = call(t, off, http.MethodPost, "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "x"}, nil)
	wantError(t, rec, 503, CodeNotReady, "", "skills are not configured")

	h, f := skillServer(t)
	f.fail = errors.New("store: disk full")
	rec = call(t, h, http.MethodGet, "/v1/skills", "/v1/skills", nil, nil)
	wantError(t, rec, 500, CodeInternal, "", "listing skills failed")
	rec = call(t, h, http.MethodPost, "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "x"}, nil)
	wantError(t, rec, 500, CodeInternal, "", "retiring a skill failed")
	if strings.Contains(rec.Body.String(), "disk full") {
		t.Errorf("internal detail leaked: %s", rec.Body)
	}
}

// The real skill memory satisfies SkillAdmin and its errors map the same way.
func TestRetireSkillMemory(t *testing.T) {
	store := skills.NewFileStore(filepath.Join(t.TempDir(), "skills.json"))
	if err := store.Put(t.Context(), testRule("sk-a", export.SkillActive)); err != nil {
		t.Fatal(err)
	}
	mem := skills.New(store, nil, skills.Config{}, kgtest.Logger(t))
	h := New(Config{}, Deps{Log: kgtest.Logger(t), Skills: mem}).Handler()
	var r skills.Rule
	rec := call(t, h, http.MethodPost, "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "hurts"}, &r)
	if rec.Code != 200 || r.Version != 2 || r.Status != export.SkillRetired || r.RetiredReason != "manual: hurts" {
		t.Fatalf("%d %+v", rec.Code, r)
	}
	rec = call(t, h, http.MethodPost, "/v1/skills/sk-a/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "hurts"}, nil)
	wantError(t, rec, 409, CodeSkillRetired, "id", "already retired")
	rec = call(t, h, http.MethodPost, "/v1/skills/sk-z/retire", "/v1/skills/{id}/retire", map[string]any{"reason": "hurts"}, nil)
	wantError(t, rec, 404, CodeSkillNotFound, "id", "no skill")
}
