package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/gateway"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// top --once against a real gateway with keys: a frame with an admin key,
// the scope named without one, and the variable named without any key.
func TestTopOnce(t *testing.T) {
	f := apikey.NewFile(t.TempDir())
	admin, _, err := f.Create("ops", []apikey.Scope{apikey.Admin})
	if err != nil {
		t.Fatal(err)
	}
	trainer, _, err := f.Create("trainer", []apikey.Scope{apikey.Reward})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gateway.New(gateway.Config{}, gateway.Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)}).Handler())
	defer srv.Close()
	for _, tt := range []struct {
		name, key string
		code      int
		want      []string // in stdout when code is 0, else in stderr
	}{
		{"admin", admin, 0, []string{"kernelgate  " + srv.URL, "not ready", "none yet", "(no local worker)", "(no GPU; none: no local workers)"}},
		{"reward key", trainer, 1, []string{"403", "lacks scope \"admin\"", "$KG_TEST_KEY", "top needs scope admin"}},
		{"no key", "", 1, []string{"401", "$KG_TEST_KEY is empty"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KG_TEST_KEY", tt.key)
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"top", "--once", "--url", srv.URL, "--key-env", "KG_TEST_KEY"}, &stdout, &stderr)
			out := stdout.String()
			if code != 0 {
				out = stderr.String()
			}
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout.String(), stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
		})
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"top", "--interval", "1ms"}, &bytes.Buffer{}, &stderr); code != exitUsage {
		t.Errorf("--interval 1ms: exit %d, want %d (%s)", code, exitUsage, stderr.String())
	}
}
