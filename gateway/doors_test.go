package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// knock sends one request with the given headers ("Host" sets the Host)
// from remote (an ip:port; "" keeps httptest's).
func knock(h http.Handler, method, path, remote string, headers map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8080"
	if remote != "" {
		req.RemoteAddr = remote
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Open mode is chosen, never the default: a serve keyring without a key
// file lets nobody in unless Doors.Open, and its 401 names both ways out.
func TestNoKeysNeedsOpen(t *testing.T) {
	noFile := func() *apikey.Keyring { return apikey.NewKeyring(apikey.NewFile(t.TempDir())) }
	closed := New(Config{}, Deps{Keys: noFile(), Log: kgtest.Logger(t)}).Handler()
	rec := knock(closed, "GET", "/v1/gpus", "", nil, "")
	if e := decodeError(t, rec); rec.Code != 401 || !strings.Contains(e.Message, "kernelgate keys create") || !strings.Contains(e.Message, "--open") {
		t.Fatalf("no keys, not open: %d %s", rec.Code, rec.Body)
	}
	checkSpec(t, "GET", "/v1/gpus", rec)
	if rec := knock(closed, "GET", "/healthz", "", nil, ""); rec.Code != 200 {
		t.Fatalf("healthz is always open: %d", rec.Code)
	}
	open := New(Config{Doors: Doors{Open: true}}, Deps{Keys: noFile(), Log: kgtest.Logger(t)}).Handler()
	if rec := knock(open, "GET", "/v1/gpus", "", nil, ""); rec.Code != 200 {
		t.Fatalf("--open without keys: %d %s", rec.Code, rec.Body)
	}
	// Beyond loopback --open is refused at start.
	if err := CheckOpen("0.0.0.0:8080", Doors{Open: true}); err == nil || !strings.Contains(err.Error(), "only a loopback --addr") {
		t.Fatalf("CheckOpen beyond loopback: %v", err)
	}
	if err := CheckOpen("127.0.0.1:8080", Doors{Open: true}); err != nil {
		t.Fatal(err)
	}
}

// On loopback only loopback names get in, by Host and by Origin: a web page
// (DNS rebinding, a cross-site POST) gets 403 before anything runs.
func TestHostAndOriginOnLoopback(t *testing.T) {
	loop := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	any := New(Config{Doors: Doors{AllowedHosts: []string{"*"}}}, Deps{Log: kgtest.Logger(t)}).Handler()
	named := New(Config{Doors: Doors{AllowedHosts: []string{"gw.internal"}}}, Deps{Log: kgtest.Logger(t)}).Handler()
	beyond := New(Config{Addr: "0.0.0.0:8080"}, Deps{Log: kgtest.Logger(t)}).Handler()
	tests := []struct {
		name    string
		h       http.Handler
		headers map[string]string
		status  int
		msg     string
	}{
		{"localhost with a port", loop, map[string]string{"Host": "localhost:1234"}, 200, ""},
		{"127.0.0.1", loop, map[string]string{"Host": "127.0.0.1"}, 200, ""},
		{"[::1]", loop, map[string]string{"Host": "[::1]:8080"}, 200, ""},
		{"LOCALHOST.", loop, map[string]string{"Host": "LOCALHOST."}, 200, ""},
		{"rebinding name", loop, map[string]string{"Host": "evil.example:8080"}, 403, "DNS rebinding"},
		{"empty Host", loop, map[string]string{"Host": ""}, 403, "Host"},
		{"local origin", loop, map[string]string{"Origin": "http://localhost:3000"}, 200, ""},
		{"foreign origin", loop, map[string]string{"Origin": "https://evil.example"}, 403, "web pages may not drive it"},
		{"null origin", loop, map[string]string{"Origin": "null"}, 403, "Origin"},
		{"origin of another scheme", loop, map[string]string{"Origin": "file://localhost"}, 403, "Origin"},
		{"allow any", any, map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 200, ""},
		{"an added name", named, map[string]string{"Host": "gw.internal:8080"}, 200, ""},
		{"an added name replaces the defaults", named, map[string]string{"Host": "localhost"}, 403, "gw.internal"},
		{"beyond loopback keys decide", beyond, map[string]string{"Host": "evil.example"}, 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := knock(tt.h, "GET", "/v1/gpus", "", tt.headers, "")
			if rec.Code != tt.status {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tt.status == 403 {
				e := decodeError(t, rec)
				if e.Code != CodeForbidden || !strings.Contains(e.Message, tt.msg) {
					t.Fatalf("%+v", e)
				}
				checkSpec(t, "GET", "/v1/gpus", rec)
			}
		})
	}
}

// A body must be declared JSON: a form or text/plain POST (what a web page
// can send cross-site without a preflight) is 415.
func TestBodiesMustBeJSON(t *testing.T) {
	h := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	tests := []struct {
		ct     string
		body   string
		status int
	}{
		{"text/plain", "{}", 415},
		{"application/x-www-form-urlencoded", `{"reference": "x"}`, 415},
		{"multipart/form-data; boundary=x", "{}", 415},
		{"", "{}", 415},
		{"application/json", "{", 400},
		{"application/json; charset=utf-8", "{", 400},
		{"Application/JSON", "{", 400},
	}
	for _, tt := range tests {
		t.Run(tt.ct, func(t *testing.T) {
			rec := knock(h, "POST", "/v1/rewards", "", map[string]string{"Content-Type": tt.ct}, tt.body)
			if rec.Code != tt.status {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tt.status == 415 {
				if e := decodeError(t, rec); e.Code != CodeUnsupportedMediaType || !strings.Contains(e.Message, "application/json") {
					t.Fatalf("%+v", e)
				}
			}
			checkSpec(t, "POST", "/v1/rewards", rec)
		})
	}
	// No body, no Content-Type needed: the request reaches its handler.
	if rec := knock(h, "POST", "/v1/searches/s_1/cancel", "", nil, ""); rec.Code == 415 {
		t.Fatalf("a bodiless POST: %d %s", rec.Code, rec.Body)
	}
}
