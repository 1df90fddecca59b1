package ui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kernelgate/kernelgate/gateway/ui"
)

// fakeAPI answers like the gateway: 401 without a key, 403 for the key
// "kg_reward" on admin routes, and records what each request carried.
type fakeAPI struct {
	mu   sync.Mutex
	seen []*http.Request
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r)
	f.mu.Unlock()
	refuse := func(status int, code, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
	}
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case key == "":
		refuse(401, "unauthorized", "an API key is required")
	case key == "kg_reward" && (r.URL.Path == "/metrics" || r.URL.Path == "/v1/gpus"):
		refuse(403, "forbidden", `key "trainer" lacks scope "admin"`)
	case r.URL.Path == "/metrics":
		w.Write([]byte("# TYPE kernelgate_ready gauge\nkernelgate_ready 1\n"))
	case r.URL.Path == "/v1/gpus":
		w.Write([]byte(`{"mode":"cpu_interpreter","gpus":[]}`))
	case r.URL.Path == "/v1/skills":
		w.Write([]byte(`{"skills":[{"id":"k1","rule":"You cannot call tl.foo.","status":"active","hits":3},` +
			`{"id":"k2","rule":"You cannot <script>alert(1)</script>.","status":"retired","retired_reason":"wrong"}]}`))
	default:
		w.Write([]byte(`{}`))
	}
}

func (f *fakeAPI) last() *http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[len(f.seen)-1]
}

func get(t *testing.T, h http.Handler, path, cookie, bearer string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("Accept-Encoding", "gzip")
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: "kernelgate_ui_key", Value: cookie})
	}
	if bearer != "" {
		r.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func TestPagesUseTheCallersKey(t *testing.T) {
	api := &fakeAPI{}
	h := ui.New(ui.Config{API: api})
	for _, tt := range []struct {
		name, path, cookie, bearer string
		status                     int
		has, hasNot                []string
	}{
		{"no key: the login form", "/ui/", "", "", 401, []string{`id="login"`, "an API key is required"}, []string{"Verdicts over time"}},
		{"a reward key on the overview", "/ui/", "kg_reward", "", 403, []string{`lacks scope &#34;admin&#34;`}, []string{`id="login"`}},
		{"an admin key in the cookie", "/ui/", "kg_admin", "", 200, []string{"Verdicts over time", "no local worker"}, nil},
		{"a bearer header works too", "/ui/", "", "kg_admin", 200, []string{"Verdicts over time"}, nil},
		{"skills, filtered", "/ui/skills?q=foo", "kg_admin", "", 200, []string{"You cannot call tl.foo.", "1 of 2 rules"}, []string{"alert(1)"}},
		{"skills, escaped", "/ui/skills?status=retired", "kg_admin", "", 200, []string{"&lt;script&gt;", "wrong"}, []string{"<script>alert"}},
		{"no such page", "/ui/nope", "kg_admin", "", 404, []string{"no such page"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := get(t, h, tt.path, tt.cookie, tt.bearer)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d: %.300s", rec.Code, tt.status, body)
			}
			for _, s := range tt.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %q in %.600s", s, body)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(body, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
	r := api.last()
	if r.Header.Get("Cookie") != "" || r.Header.Get("Accept-Encoding") != "" || r.Method != "GET" {
		t.Errorf("a read carried the cookie or asked for gzip: %v %v", r.Method, r.Header)
	}
}

func TestPassThroughReadsOnly(t *testing.T) {
	api := &fakeAPI{}
	h := ui.New(ui.Config{API: api})
	for path, want := range map[string]int{
		"/ui/api/v1/batches/b_1": 200, "/ui/api/v1/searches/s_1/events": 200, "/ui/api/metrics": 200,
		"/ui/api/v1/rewards": 404, "/ui/api/v1/exports/x/files/a": 404, "/ui/api/healthz": 404, "/ui/api/v1/batchesX": 404,
		"/ui/api/v1/batches/%2e%2e/%2e%2e/v1/exports/x/files/a": 404,
	} {
		if rec := get(t, h, path, "kg_admin", ""); rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
	}
	rec := get(t, h, "/ui/api/v1/searches?state=running", "kg_admin", "")
	if r := api.last(); rec.Code != 200 || r.URL.RequestURI() != "/v1/searches?state=running" || r.Header.Get("Authorization") != "Bearer kg_admin" {
		t.Errorf("pass-through sent %s with %q", r.URL.RequestURI(), r.Header.Get("Authorization"))
	}
	n := len(api.seen)
	post := httptest.NewRequest("POST", "/ui/api/v1/batches/b_1", nil)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, post)
	if rec.Code/100 == 2 || len(api.seen) != n {
		t.Errorf("POST through /ui/api: %d, reached the API: %v", rec.Code, len(api.seen) != n)
	}
}

func TestLoginCookie(t *testing.T) {
	h := ui.New(ui.Config{API: &fakeAPI{}})
	key := "kg_" + strings.Repeat("a2", 26)
	for body, want := range map[string]int{`{"key":"` + key + `"}`: 204, `{"key":""}`: 400, `not json`: 400, `{"key":"a;b"}`: 400,
		`{"key":"` + key + `","x":1}`: 400, `{"key":"` + key + `"} {}`: 400, `null`: 400, `[]`: 400} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/ui/login", strings.NewReader(body)))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", body, rec.Code, want)
		}
		if want != 204 {
			continue
		}
		c := rec.Result().Cookies()
		if len(c) != 1 || c[0].Value != key || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/ui" {
			t.Errorf("cookie %+v", c)
		}
	}
	rec := get(t, h, "/ui/logout", "kg_abc", "")
	if c := rec.Result().Cookies(); rec.Code != http.StatusSeeOther || len(c) != 1 || c[0].MaxAge >= 0 {
		t.Errorf("logout: %d %+v", rec.Code, c)
	}
}

// The login body is untrusted: nothing panics, and only a key-shaped value
// becomes a cookie.
func FuzzLogin(f *testing.F) {
	for _, seed := range []string{`{"key":"kg_` + strings.Repeat("a", 52) + `"}`, `{"key":""}`, `{}`, `null`, `{"key":1}`, "\x00"} {
		f.Add(seed)
	}
	h := ui.New(ui.Config{API: &fakeAPI{}})
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/ui/login", strings.NewReader(body)))
		cookies := rec.Result().Cookies()
		switch rec.Code {
		case http.StatusNoContent:
			if len(cookies) != 1 || len(cookies[0].Value) != 55 || !strings.HasPrefix(cookies[0].Value, "kg_") {
				t.Fatalf("204 with cookies %+v for %q", cookies, body)
			}
		case http.StatusBadRequest:
			if len(cookies) != 0 {
				t.Fatalf("400 set a cookie for %q", body)
			}
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
