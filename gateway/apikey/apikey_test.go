package apikey

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseScopes(t *testing.T) {
	tests := []struct {
		in     string
		want   []Scope
		errHas string
	}{
		{"reward", []Scope{Reward}, ""},
		{"export, reward,reward", []Scope{Reward, Export}, ""},
		{"admin,search,export,reward", []Scope{Reward, Search, Export, Admin}, ""},
		{"", nil, "no scope"},
		{" , ", nil, "no scope"},
		{"reward,root", nil, `unknown scope "root"`},
		{"Reward", nil, "unknown scope"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseScopes(tt.in)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err %v, want %q", err, tt.errHas)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestCreateListRevoke(t *testing.T) {
	f := NewFile(filepath.Join(t.TempDir(), "data")) // the data dir does not exist yet
	f.now = func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC) }
	secret, k, err := f.Create("trainer", []Scope{Reward, Export})
	if err != nil {
		t.Fatal(err)
	}
	if !LooksLikeKey(secret) || k.Hash != Hash(secret) || !strings.HasPrefix(secret, k.Hint) || len(k.Hint) != 9 {
		t.Errorf("secret %q key %+v", secret, k)
	}
	st, err := os.Stat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(f.Path)
	if strings.Contains(string(data), secret[len(k.Hint):]) {
		t.Error("the key file holds the secret")
	}
	if _, _, err := f.Create("trainer", []Scope{Admin}); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, _, err := f.Create("bad name", []Scope{Admin}); err == nil {
		t.Error("bad name accepted")
	}
	secret2, k2, err := f.Create("", []Scope{Admin})
	if err != nil || !strings.HasPrefix(k2.Name, "key-") || secret2 == secret {
		t.Fatalf("default name: %+v %v", k2, err)
	}
	keys, err := f.Load()
	if err != nil || len(keys) != 2 || keys[0].Name != "trainer" || !keys[0].CreatedAt.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("load: %+v %v", keys, err)
	}
	if err := f.Revoke("trainer"); err != nil {
		t.Fatal(err)
	}
	if err := f.Revoke("trainer"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second revoke: %v", err)
	}
	keys, _ = f.Load()
	if len(keys) != 1 || keys[0].Name != k2.Name {
		t.Errorf("after revoke: %+v", keys)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.Path), ".keys-*")); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// The keyring sees every change of the file on the next lookup, and a
// broken file fails closed until it is repaired.
func TestKeyringFollowsTheFile(t *testing.T) {
	f := NewFile(t.TempDir())
	r := NewKeyring(f)
	if n, err := r.Len(); n != 0 || err != nil {
		t.Fatalf("no file: %d %v", n, err)
	}
	secret, _, err := f.Create("a", []Scope{Reward})
	if err != nil {
		t.Fatal(err)
	}
	if k, ok, err := r.Lookup(secret); !ok || err != nil || k.Name != "a" || !k.Has(Reward) || k.Has(Admin) {
		t.Fatalf("after create: %+v %v %v", k, ok, err)
	}
	if _, ok, _ := r.Lookup(secret + "x"); ok {
		t.Error("a different secret matched")
	}
	if err := f.Revoke("a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Lookup(secret); ok || err != nil {
		t.Fatalf("after revoke: %v %v", ok, err)
	}
	if err := os.WriteFile(f.Path, []byte(`{"version":1,"keys":[{"name":"x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Lookup(secret); err == nil {
		t.Fatal("a truncated file gave no error")
	}
	if _, err := r.Len(); err == nil {
		t.Fatal("Len: a truncated file gave no error")
	}
	secret, _, err = f.Create("b", []Scope{Admin})
	if err == nil {
		t.Fatal("Create over a broken file succeeded")
	}
	if err := os.Remove(f.Path); err != nil {
		t.Fatal(err)
	}
	secret, _, err = f.Create("b", []Scope{Admin})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Lookup(secret); !ok || err != nil {
		t.Fatalf("after repair: %v %v", ok, err)
	}
	var nilRing *Keyring
	if n, err := nilRing.Len(); n != 0 || err != nil {
		t.Errorf("nil keyring: %d %v", n, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	h := strings.Repeat("a", 64)
	for name, body := range map[string]string{
		"other version":  `{"version":2,"keys":[]}`,
		"unknown field":  `{"version":1,"keys":[],"extra":1}`,
		"bad hash":       `{"version":1,"keys":[{"name":"a","scopes":["reward"],"sha256":"kg_plaintext"}]}`,
		"no scope":       `{"version":1,"keys":[{"name":"a","scopes":[],"sha256":"` + h + `"}]}`,
		"unknown scope":  `{"version":1,"keys":[{"name":"a","scopes":["root"],"sha256":"` + h + `"}]}`,
		"duplicate name": `{"version":1,"keys":[{"name":"a","scopes":["admin"],"sha256":"` + h + `"},{"name":"a","scopes":["admin"],"sha256":"` + h + `"}]}`,
		"bad name":       `{"version":1,"keys":[{"name":"../a","scopes":["admin"],"sha256":"` + h + `"}]}`,
		"not JSON":       `version: 1`,
	} {
		if _, err := decode([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if keys, err := decode([]byte(`{"version":1}`)); err != nil || keys == nil {
		t.Errorf("empty file: %v %v", keys, err)
	}
}

func TestLooksLikeKey(t *testing.T) {
	s := newSecret()
	for in, want := range map[string]bool{
		s:                           true,
		strings.ToUpper(s):          false,
		s[:len(s)-1]:                false,
		"kg_" + s[3:len(s)-1] + "1": false,
		"":                          false,
	} {
		if LooksLikeKey(in) != want {
			t.Errorf("LooksLikeKey(%q) = %v", in, !want)
		}
	}
}

// The key file is read by the server on every change: whatever it holds,
// decoding must not panic, and what it accepts is well formed.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"keys":[{"name":"a","scopes":["reward"],"sha256":"` + strings.Repeat("0", 64) + `"}]}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := decode(data)
		if err != nil {
			return
		}
		for _, k := range keys {
			if CheckName(k.Name) != nil || len(k.Scopes) == 0 || !hexHash.MatchString(k.Hash) {
				t.Fatalf("accepted %+v", k)
			}
		}
	})
}
