package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/gateway/apikey"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// keys create/list/revoke through the cobra commands, against the file the
// server reads.
func TestKeysCommands(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	code, out, errs := runCmd(t, "keys", "create", "--scopes", "reward,export", "--name", "trainer", "--data", data)
	if code != exitOK {
		t.Fatalf("create: exit %d: %s", code, errs)
	}
	secret := strings.TrimSpace(out)
	if !apikey.LooksLikeKey(secret) || strings.Count(out, "\n") != 1 {
		t.Fatalf("create printed %q, want the key alone on one line", out)
	}
	if !strings.Contains(errs, `created key "trainer" (scopes reward,export)`) || !strings.Contains(errs, "only this once") {
		t.Errorf("create stderr %q", errs)
	}
	raw, err := os.ReadFile(filepath.Join(data, apikey.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Error("the key file holds the key")
	}
	k, ok, err := apikey.NewKeyring(apikey.NewFile(data)).Lookup(secret)
	if !ok || err != nil || k.Name != "trainer" || !k.Has(apikey.Reward) || !k.Has(apikey.Export) || k.Has(apikey.Admin) {
		t.Fatalf("the server would see %+v %v %v", k, ok, err)
	}
	if code, _, _ := runCmd(t, "keys", "create", "--scopes", "admin", "--data", data); code != exitOK {
		t.Fatalf("create without --name: exit %d", code)
	}

	code, out, _ = runCmd(t, "keys", "list", "--data", data)
	if code != exitOK || !strings.Contains(out, "trainer") || !strings.Contains(out, "reward,export") ||
		!strings.Contains(out, secret[:9]+"…") || strings.Contains(out, secret) || strings.Count(out, "\n") != 3 {
		t.Errorf("list: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "keys", "list", "--json", "--data", data)
	var listed []map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 2 || listed[0]["name"] != "trainer" {
		t.Fatalf("list --json: exit %d: %s", code, out)
	}
	if _, has := listed[0]["sha256"]; has {
		t.Error("list --json shows the hash")
	}

	if code, _, errs := runCmd(t, "keys", "revoke", "trainer", "--data", data); code != exitOK || !strings.Contains(errs, `revoked key "trainer"`) {
		t.Fatalf("revoke: exit %d: %s", code, errs)
	}
	if _, ok, _ := apikey.NewKeyring(apikey.NewFile(data)).Lookup(secret); ok {
		t.Error("a revoked key still opens the door")
	}
	if _, out, _ := runCmd(t, "keys", "list", "--data", data); strings.Contains(out, "trainer") {
		t.Errorf("list after revoke:\n%s", out)
	}
}

func TestKeysCommandErrors(t *testing.T) {
	data := t.TempDir()
	if code, _, errs := runCmd(t, "keys", "create", "--scopes", "reward", "--name", "a", "--data", data); code != exitOK {
		t.Fatal(errs)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		stderrHas string
	}{
		{"unknown scope", []string{"keys", "create", "--scopes", "reward,root"}, exitUsage, `unknown scope "root"`},
		{"no scopes flag", []string{"keys", "create"}, exitUsage, "required flag"},
		{"empty scopes", []string{"keys", "create", "--scopes", ","}, exitUsage, "no scope"},
		{"bad name", []string{"keys", "create", "--scopes", "reward", "--name", "../x"}, exitUsage, "key name"},
		{"duplicate name", []string{"keys", "create", "--scopes", "admin", "--name", "a"}, exitFailed, `a key named "a" exists`},
		{"revoke unknown", []string{"keys", "revoke", "nobody"}, exitFailed, `no key named "nobody"`},
		{"revoke without name", []string{"keys", "revoke"}, exitUsage, "one key name"},
		{"unknown subcommand", []string{"keys", "rotate"}, exitUsage, `unknown keys command "rotate"`},
		{"serve beyond loopback without keys", []string{"serve", "--addr", "0.0.0.0:0"}, exitUsage, "refusing to listen on 0.0.0.0:0 with no API keys"},
		{"serve bad rate", []string{"serve", "--rate-limit", "-1"}, exitUsage, "rate limit -1"},
		{"serve --open beyond loopback", []string{"serve", "--addr", "0.0.0.0:0", "--open"}, exitUsage, "only a loopback --addr may do"},
		{"serve bad allowed host", []string{"serve", "--allowed-hosts", "http://x"}, exitUsage, `allowed host "http://x"`},
		{"serve no allowed host", []string{"serve", "--allowed-hosts", ""}, exitUsage, "an empty list would refuse every request"},
		{"serve no auth failures", []string{"serve", "--auth-fail-limit", "0"}, exitUsage, "--auth-fail-limit 0"},
		{"serve no exports", []string{"serve", "--exports-per-hour", "0"}, exitUsage, "--exports-per-hour 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := data // holds key "a"
			if tt.args[0] == "serve" {
				dir = t.TempDir() // no keys
			}
			code, out, errs := runCmd(t, append(tt.args, "--data", dir)...)
			if code != tt.code || !strings.Contains(errs, tt.stderrHas) {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errs)
			}
			if n := strings.Count(errs, "\n"); n > 1 {
				t.Errorf("stderr reason is %d lines, want one: %q", n, errs)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}
