package apikey

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// Keyring is the server's view of a key File. Every lookup stats the file
// (about a microsecond) and rereads it when it changed, so a created key
// works and a revoked one stops working on the next request, with no
// restart and no signal. A file that cannot be read or parsed is an error
// on every lookup until it is fixed: the caller fails closed rather than
// keep serving keys that may have been revoked. A nil Keyring holds no keys.
type Keyring struct {
	file *File

	mu     sync.Mutex
	stat   os.FileInfo // of the file last read; nil when it did not exist
	byHash map[string]Key
	err    error
	loaded bool
}

// NewKeyring reads f lazily, on the first lookup.
func NewKeyring(f *File) *Keyring {
	return &Keyring{file: f}
}

// Lookup returns the key whose secret is secret.
func (r *Keyring) Lookup(secret string) (Key, bool, error) {
	keys, err := r.current()
	if err != nil {
		return Key{}, false, err
	}
	// The map is keyed by the hash, so a lookup's timing depends on the
	// hash of what the client sent, which tells it nothing about a secret.
	k, ok := keys[Hash(secret)]
	return k, ok, nil
}

// Len is the number of keys.
func (r *Keyring) Len() (int, error) {
	keys, err := r.current()
	return len(keys), err
}

// Count is Len and whether the key file exists, read at one instant. A
// file that exists but holds no key (every one revoked) means keys are
// required and none is valid: nobody gets in (gateway/auth.go).
func (r *Keyring) Count() (n int, exists bool, err error) {
	if r == nil {
		return 0, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	keys, err := r.currentLocked()
	return len(keys), r.stat != nil, err
}

func (r *Keyring) current() (map[string]Key, error) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.currentLocked()
}

// currentLocked is current with r.mu held.
func (r *Keyring) currentLocked() (map[string]Key, error) {
	st, err := os.Stat(r.file.Path)
	if errors.Is(err, fs.ErrNotExist) {
		st, err = nil, nil
	}
	if err != nil {
		r.loaded, r.err = false, fmt.Errorf("apikey: %w", err)
		return nil, r.err
	}
	if r.loaded && sameStamp(r.stat, st) {
		return r.byHash, r.err
	}
	r.stat, r.byHash, r.err = r.read()
	r.loaded = true
	return r.byHash, r.err
}

// read reads the file through one descriptor, so the stamp it returns is
// the one of the bytes it parsed.
func (r *Keyring) read() (os.FileInfo, map[string]Key, error) {
	fh, err := os.Open(r.file.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]Key{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("apikey: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("apikey: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(fh, 16<<20))
	if err != nil {
		return st, nil, fmt.Errorf("apikey: %w", err)
	}
	keys, err := decode(data)
	if err != nil {
		return st, nil, fmt.Errorf("apikey: %s: %w", r.file.Path, err)
	}
	byHash := make(map[string]Key, len(keys))
	for _, k := range keys {
		byHash[k.Hash] = k
	}
	return st, byHash, nil
}

// sameStamp reports whether a and b describe the same file contents as far
// as a stat can tell: same inode (a rename makes a new one), size and mtime.
func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
