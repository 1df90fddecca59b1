package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Scope is what a key may do. The gateway's route table (gateway/auth.go)
// names the scope of each route.
type Scope string

const (
	Reward Scope = "reward" // rewards, evaluations, episodes, batches, tasks (read), OpenRLHF
	Search Scope = "search" // AdaExplore searches
	Export Scope = "export" // dataset exports
	Admin  Scope = "admin"  // task registration, /metrics, /v1/gpus
)

// Scopes lists every scope, in the order help texts show them.
var Scopes = []Scope{Reward, Search, Export, Admin}

// ParseScopes reads a comma-separated scope list ("reward,export"):
// at least one, each known, duplicates dropped, in Scopes order.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		sc := Scope(strings.TrimSpace(part))
		if sc == "" {
			continue
		}
		if !slices.Contains(Scopes, sc) {
			return nil, fmt.Errorf("unknown scope %q: want one or more of %s", sc, scopeList())
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scope given: want one or more of %s", scopeList())
	}
	slices.SortFunc(out, func(a, b Scope) int { return slices.Index(Scopes, a) - slices.Index(Scopes, b) })
	return out, nil
}

func scopeList() string {
	names := make([]string, len(Scopes))
	for i, s := range Scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Key is one stored key: never the secret itself, only its hash.
type Key struct {
	Name      string    `json:"name"`
	Scopes    []Scope   `json:"scopes"`
	CreatedAt time.Time `json:"created_at"`
	// Hint is the secret's first characters, so `keys list` can say which
	// key a client holds. 6 of 52 base32 characters leave 226 bits unknown.
	Hint string `json:"hint"`
	// Hash is hex SHA-256 of the whole secret. A plain hash is enough here
	// because the secret is 256 random bits, not a password: no dictionary
	// or brute force reaches a preimage, so a slow KDF (bcrypt, argon2) would
	// add milliseconds to every request and no security. The file therefore
	// grants nothing to whoever reads it, a sandbox escape included.
	Hash string `json:"sha256"`
}

// Has reports whether k carries scope s.
func (k Key) Has(s Scope) bool { return slices.Contains(k.Scopes, s) }

// Prefix starts every secret, so that leaked keys are easy to grep for.
const Prefix = "kg_"

// secretLen is len(Prefix) plus 32 bytes in unpadded base32.
const secretLen = len(Prefix) + 52

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newSecret returns a fresh random secret: Prefix and 256 bits in lowercase base32.
func newSecret() string {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	return Prefix + strings.ToLower(b32.EncodeToString(raw[:]))
}

// Hash is the stored form of secret.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeKey reports whether s has the shape of a secret (prefix,
// length, alphabet); the gateway says so in its 401 message.
func LooksLikeKey(s string) bool {
	if len(s) != secretLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for _, c := range s[len(Prefix):] {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckName says what is wrong with a key name ("" when it is fine).
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("key name %q: want 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)
	}
	return nil
}

// defaultName names a key created without --name.
func defaultName() string {
	return "key-" + strings.ToLower(rand.Text()[:8])
}
