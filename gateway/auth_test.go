package gateway

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// request sends method path with an Authorization header (none when auth is "").
func request(t *testing.T, h http.Handler, method, path, auth string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Host = "localhost" // a loopback gateway answers only to loopback names (doors.go)
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// keyFile creates keys (name → comma-separated scopes) and returns the file
// and the secrets by name.
func keyFile(t *testing.T, keys map[string]string) (*apikey.File, map[string]string) {
	t.Helper()
	f := apikey.NewFile(t.TempDir())
	secrets := map[string]string{}
	for name, scopes := range keys {
		sc, err := apikey.ParseScopes(scopes)
		if err != nil {
			t.Fatal(err)
		}
		secret, _, err := f.Create(name, sc)
		if err != nil {
			t.Fatal(err)
		}
		secrets[name] = secret
	}
	return f, secrets
}

func TestAuthScopes(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"trainer": "reward", "ops": "admin", "exporter": "export"})
	// Loopback, but keys exist: they are enforced.
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	bearer := func(name string) string { return "Bearer " + keys[name] }
	unknown := "Bearer kg_" + strings.Repeat("a", 52)
	tests := []struct {
		name         string
		method, path string
		specPath     string // "" when the path is not in openapi.yaml
		auth         string
		status       int
		code         Code
		inMessage    string
	}{
		{"health is open", "GET", "/healthz", "/healthz", "", 200, "", ""},
		{"readiness is open", "GET", "/readyz", "/readyz", "", 503, CodeNotReady, "no worker"},
		{"the contract is open", "GET", "/openapi.yaml", "", "", 200, "", ""},      // YAML: TestServesItsOpenAPI
		{"the root leads to the dashboard, open", "GET", "/", "", "", 302, "", ""}, // HTML: Location checked below
		{"only GET on the root", "POST", "/", "", "", 401, CodeUnauthorized, ""},
		{"no header", "POST", "/v1/rewards", "/v1/rewards", "", 401, CodeUnauthorized, "Authorization: Bearer"},
		{"basic auth", "POST", "/v1/rewards", "/v1/rewards", "Basic dXNlcjpwYXNz", 401, CodeUnauthorized, "must be Bearer"},
		{"bearer without key", "POST", "/v1/rewards", "/v1/rewards", "Bearer ", 401, CodeUnauthorized, "no key"},
		{"malformed key", "POST", "/v1/rewards", "/v1/rewards", "Bearer kg_short", 401, CodeUnauthorized, "malformed"},
		{"unknown key", "POST", "/v1/rewards", "/v1/rewards", unknown, 401, CodeUnauthorized, "unknown or revoked"},
		{"lowercase scheme", "POST", "/v1/rewards", "/v1/rewards", "bearer " + keys["trainer"], 400, CodeBadJSON, ""},
		{"wrong scope", "POST", "/v1/rewards", "/v1/rewards", bearer("exporter"), 403, CodeForbidden, `lacks scope "reward"`},
		{"right scope passes", "POST", "/v1/rewards", "/v1/rewards", bearer("trainer"), 400, CodeBadJSON, ""},
		{"admin is not reward", "POST", "/v1/rewards", "/v1/rewards", bearer("ops"), 403, CodeForbidden, "it has admin"},
		{"gpus need admin", "GET", "/v1/gpus", "/v1/gpus", bearer("trainer"), 403, CodeForbidden, "admin"},
		{"gpus with admin", "GET", "/v1/gpus", "/v1/gpus", bearer("ops"), 200, "", ""},
		{"metrics need admin", "GET", "/metrics", "/metrics", bearer("trainer"), 403, CodeForbidden, "admin"},
		{"metrics without key", "GET", "/metrics", "/metrics", "", 401, CodeUnauthorized, ""},
		{"metrics with admin", "GET", "/metrics", "/metrics", bearer("ops"), 200, "", ""},
		{"unknown path without key", "GET", "/v1/nope", "", "", 401, CodeUnauthorized, ""},
		{"unknown path with a key", "GET", "/v1/nope", "", bearer("exporter"), 404, CodeNotFound, "no such endpoint"},
		{"wrong method with a key", "GET", "/v1/rewards", "", bearer("trainer"), 405, CodeMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := request(t, srv.Handler(), tt.method, tt.path, tt.auth, []byte("{"))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.specPath != "" {
				checkSpec(t, tt.method, tt.specPath, rec)
			}
			if tt.code == "" {
				return
			}
			e := decodeError(t, rec)
			if e.Code != tt.code || !strings.Contains(e.Message, tt.inMessage) {
				t.Errorf("error %+v, want code %s and %q", e, tt.code, tt.inMessage)
			}
			if tt.status == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: %v", rec.Header())
			}
		})
	}
	t.Run("the root's Location", func(t *testing.T) {
		if rec := request(t, srv.Handler(), "GET", "/", "", nil); rec.Header().Get("Location") != "/ui/" {
			t.Errorf("%d, Location %q, want /ui/", rec.Code, rec.Header().Get("Location"))
		}
	})
	t.Run("two Authorization headers", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/v1/rewards", strings.NewReader("{"))
		req.Host = "localhost" // a loopback gateway answers only to loopback names (doors.go)
		req.Header.Add("Authorization", bearer("trainer"))
		req.Header.Add("Authorization", bearer("ops"))
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if e := decodeError(t, rec); rec.Code != 401 || !strings.Contains(e.Message, "more than one") {
			t.Errorf("%d %+v", rec.Code, e)
		}
	})
}

// A revoked key stops working on the next request; a new one starts.
func TestKeyChangesApplyWithoutRestart(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"a": "reward", "b": "admin"})
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	if rec := request(t, srv.Handler(), "POST", "/v1/rewards", "Bearer "+keys["a"], []byte("{")); rec.Code != 400 {
		t.Fatalf("before revoke: %d %s", rec.Code, rec.Body)
	}
	if err := f.Revoke("a"); err != nil {
		t.Fatal(err)
	}
	if rec := request(t, srv.Handler(), "POST", "/v1/rewards", "Bearer "+keys["a"], []byte("{")); rec.Code != 401 {
		t.Fatalf("after revoke: %d %s", rec.Code, rec.Body)
	}
	if err := f.Revoke("b"); err != nil {
		t.Fatal(err)
	}
	// The last key is gone, but keys.json is still there: nobody gets in,
	// not everybody, even with open mode on. Revoking the last key must not
	// open the gateway to every caller.
	open := New(Config{Doors: Doors{Open: true}}, Deps{Bus: startBus(t, bus.Options{}), Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	for _, h := range []http.Handler{srv.Handler(), open.Handler()} {
		for _, path := range []string{"/v1/rewards", "/metrics"} {
			rec := request(t, h, "POST", path, "", []byte("{"))
			if e := decodeError(t, rec); rec.Code != 401 || !strings.Contains(e.Message, "every API key of this server has been revoked") {
				t.Fatalf("no keys left on loopback: %s %d %s", path, rec.Code, rec.Body)
			}
		}
	}
}

// On loopback without keys every endpoint is open, /metrics and /v1/gpus included.
func TestOpenModeOnLoopback(t *testing.T) {
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	for _, path := range []string{"/v1/gpus", "/metrics"} {
		if rec := request(t, srv.Handler(), "GET", path, "", nil); rec.Code != 200 {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	// A header is not checked against keys that do not exist.
	if rec := request(t, srv.Handler(), "POST", "/v1/rewards", "Bearer junk", []byte("{")); rec.Code != 400 {
		t.Errorf("rewards: %d %s", rec.Code, rec.Body)
	}
}

// Beyond loopback keys are required even when none exist (they were all
// revoked after start): every request but the probes is refused.
func TestKeysRequiredBeyondLoopback(t *testing.T) {
	srv := New(Config{Addr: "0.0.0.0:8080"}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	rec := request(t, srv.Handler(), "GET", "/v1/gpus", "", nil)
	if e := decodeError(t, rec); rec.Code != 401 || !strings.Contains(e.Message, "has none") {
		t.Errorf("%d %+v", rec.Code, e)
	}
	if rec := request(t, srv.Handler(), "GET", "/healthz", "", nil); rec.Code != 200 {
		t.Errorf("healthz %d", rec.Code)
	}
}

func TestCheckKeys(t *testing.T) {
	empty := apikey.NewKeyring(apikey.NewFile(t.TempDir()))
	f, _ := keyFile(t, map[string]string{"a": "reward"})
	some := apikey.NewKeyring(f)
	broken := apikey.NewFile(t.TempDir())
	if err := os.WriteFile(broken.Path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr   string
		keys   *apikey.Keyring
		errHas string
	}{
		{"127.0.0.1:8080", empty, ""},
		{"127.0.0.1:8080", nil, ""},
		{"localhost:8080", empty, ""},
		{"[::1]:8080", empty, ""},
		{"0.0.0.0:8080", empty, "refusing to listen on 0.0.0.0:8080 with no API keys"},
		{":8080", nil, "no API keys"},
		{"10.1.2.3:8080", empty, "no API keys"},
		{"0.0.0.0:8080", some, ""},
		{"127.0.0.1:8080", apikey.NewKeyring(broken), "malformed key file"},
	}
	for _, tt := range tests {
		err := CheckKeys(tt.addr, tt.keys)
		if (tt.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errHas)) {
			t.Errorf("CheckKeys(%s): %v, want %q", tt.addr, err, tt.errHas)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("CheckKeys(%s): reason is not one line", tt.addr)
		}
	}
}

// Serve itself refuses a listener beyond loopback when there are no keys.
func TestServeRefusesOpenNonLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot listen on 0.0.0.0: %v", err)
	}
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Log: kgtest.Logger(t)})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := srv.Serve(ctx, ln); err == nil || !strings.Contains(err.Error(), "no API keys") {
		t.Fatalf("Serve: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.1.2.3:1": true, "[::1]:8080": true, "localhost:80": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:8080": false, "example.com:80": false,
		"192.168.1.2:80": false, "": false, "127.0.0.1": true,
	} {
		if IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%q) = %v", addr, !want)
		}
	}
}

// Every route has a rule in routeScopes and is in openapi.yaml: a route
// added without them fails here (and needs an admin key meanwhile).
func TestEveryRouteHasAScope(t *testing.T) {
	srv := New(Config{}, Deps{Log: kgtest.Logger(t)})
	doc := loadSpec(t)
	for _, r := range srv.Handler().(*gin.Engine).Routes() {
		if _, ok := scopeFor(r.Method, r.Path); !ok {
			t.Errorf("%s %s has no rule in routeScopes (auth.go)", r.Method, r.Path)
		}
		specPath := ginToSpecPath(r.Path)
		if item := doc.Paths.Find(specPath); item == nil || item.GetOperation(r.Method) == nil {
			t.Errorf("%s %s is not in openapi.yaml", r.Method, specPath)
		}
	}
	for route, want := range map[string]scopeRule{
		"GET /v1/tasks":               {path: "/v1/tasks", method: "GET", scope: apikey.Reward},
		"GET /v1/tasks/:id":           {path: "/v1/tasks", method: "GET", scope: apikey.Reward},
		"POST /v1/tasks":              {path: "/v1/tasks", scope: apikey.Admin},
		"POST /openrlhf/reward":       {path: "/openrlhf", scope: apikey.Reward},
		"GET /v1/batches/:id":         {path: "/v1/batches", scope: apikey.Reward},
		"GET /v1/exports/:id":         {path: "/v1/exports", scope: apikey.Export},
		"POST /v1/searches":           {path: "/v1/searches", scope: apikey.Search},
		"GET /v1/searches/:id/events": {path: "/v1/searches", scope: apikey.Search},
		"GET /v1/skills":              {method: "GET", path: "/v1/skills", scope: apikey.Search},
		"POST /v1/skills/:id/retire":  {path: "/v1/skills", scope: apikey.Admin},
		"GET /healthz":                {path: "/healthz", open: true},
		"GET /openapi.yaml":           {path: "/openapi.yaml", open: true},
		"GET /":                       {method: "GET", path: "/", open: true},
		"GET /v1/rewardsX":            {},
	} {
		method, path, _ := strings.Cut(route, " ")
		if got, _ := scopeFor(method, path); got != want {
			t.Errorf("%s: %+v, want %+v", route, got, want)
		}
	}
}

// ginToSpecPath turns gin's "/v1/tasks/:id" into OpenAPI's "/v1/tasks/{id}".
func ginToSpecPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// The Authorization header is untrusted: whatever it holds, parsing must not
// panic, and every refusal is a 401 from the table.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer kg_" + strings.Repeat("a", 52), "Bearer", "bearer  x ", "Basic a", "", "Bearer kg_\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Authorization", v)
		secret, aerr := bearer(h)
		if aerr != nil {
			if aerr.Code != CodeUnauthorized || aerr.status != 401 || aerr.Message == "" {
				t.Fatalf("refusal outside the table: %+v", aerr)
			}
			return
		}
		if !apikey.LooksLikeKey(secret) {
			t.Fatalf("accepted %q", secret)
		}
	})
}

// Error messages arrive as written: "<key>", not "\u003ckey\u003e".
func TestErrorMessagesAreNotHTMLEscaped(t *testing.T) {
	f, _ := keyFile(t, map[string]string{"trainer": "reward"})
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	rec := request(t, srv.Handler(), "POST", "/v1/rewards", "", []byte("{"))
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "Bearer <key>") || strings.Contains(rec.Body.String(), `\u003c`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
