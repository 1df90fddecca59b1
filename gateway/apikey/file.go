package apikey

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// FileName is the key file's name inside the data directory.
const FileName = "keys.json"

// fileVersion is the key file's format version; a reader refuses others.
const fileVersion = 1

// Errors of Create and Revoke.
var (
	ErrExists   = errors.New("apikey: a key with this name exists")
	ErrNotFound = errors.New("apikey: no key with this name")
)

// fileBody is the JSON of the key file.
type fileBody struct {
	Version int   `json:"version"`
	Keys    []Key `json:"keys"`
}

// File is the key file at Path. Create and Revoke read, change and replace
// it (temp file, fsync, rename), so a reader never sees half a file; two
// commands changing it at the same instant may lose one change, so run keys
// commands one at a time.
type File struct {
	Path string
	now  func() time.Time
}

// NewFile is the key file of dataDir.
func NewFile(dataDir string) *File {
	return &File{Path: filepath.Join(dataDir, FileName), now: time.Now}
}

// Load returns the stored keys; a missing file holds none.
func (f *File) Load() ([]Key, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return []Key{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("apikey.Load: %w", err)
	}
	keys, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("apikey.Load %s: %w", f.Path, err)
	}
	return keys, nil
}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// decode parses and checks a key file's contents.
func decode(data []byte) ([]Key, error) {
	var body fileBody
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("malformed key file: %w", err)
	}
	if body.Version != fileVersion {
		return nil, fmt.Errorf("key file version %d, this binary reads %d", body.Version, fileVersion)
	}
	seen := map[string]bool{}
	for i, k := range body.Keys {
		if err := CheckName(k.Name); err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if seen[k.Name] {
			return nil, fmt.Errorf("key %q appears twice", k.Name)
		}
		seen[k.Name] = true
		if !hexHash.MatchString(k.Hash) {
			return nil, fmt.Errorf("key %q: sha256 is not 64 lowercase hex digits", k.Name)
		}
		if len(k.Scopes) == 0 {
			return nil, fmt.Errorf("key %q has no scope", k.Name)
		}
		for _, s := range k.Scopes {
			if _, err := ParseScopes(string(s)); err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Name, err)
			}
		}
	}
	if body.Keys == nil {
		body.Keys = []Key{}
	}
	return body.Keys, nil
}

// Create stores a new key named name ("" picks one) with scopes and returns
// its secret, which exists nowhere else: the file keeps only its hash.
func (f *File) Create(name string, scopes []Scope) (secret string, k Key, err error) {
	if len(scopes) == 0 {
		return "", Key{}, errors.New("apikey.Create: no scope")
	}
	if name == "" {
		name = defaultName()
	}
	if err := CheckName(name); err != nil {
		return "", Key{}, fmt.Errorf("apikey.Create: %w", err)
	}
	keys, err := f.Load()
	if err != nil {
		return "", Key{}, err
	}
	for _, old := range keys {
		if old.Name == name {
			return "", Key{}, fmt.Errorf("apikey.Create %q: %w", name, ErrExists)
		}
	}
	secret = newSecret()
	k = Key{Name: name, Scopes: scopes, CreatedAt: f.now().UTC().Truncate(time.Second),
		Hint: secret[:len(Prefix)+6], Hash: Hash(secret)}
	if err := f.write(append(keys, k)); err != nil {
		return "", Key{}, err
	}
	return secret, k, nil
}

// Revoke deletes the key named name.
func (f *File) Revoke(name string) error {
	keys, err := f.Load()
	if err != nil {
		return err
	}
	for i, k := range keys {
		if k.Name == name {
			return f.write(append(keys[:i], keys[i+1:]...))
		}
	}
	return fmt.Errorf("apikey.Revoke %q: %w", name, ErrNotFound)
}

// write replaces the file with keys: a 0600 temp file in the same directory,
// fsynced, renamed over the old one, and the directory fsynced.
func (f *File) write(keys []Key) error {
	data, err := json.MarshalIndent(fileBody{Version: fileVersion, Keys: keys}, "", "  ")
	if err != nil {
		return fmt.Errorf("apikey.write: %w", err)
	}
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("apikey.write: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".keys-*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("apikey.write: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, werr := tmp.Write(append(data, '\n'))
	if werr == nil {
		werr = tmp.Chmod(0o600)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("apikey.write: %w", werr)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("apikey.write: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename survives a crash; not every filesystem supports it
		d.Close()
	}
	return nil
}
