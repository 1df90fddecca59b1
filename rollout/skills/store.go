package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps every version of every rule. Put adds a version; it must
// refuse a version that is not newer than the rule's latest (ErrVersion), so
// two writers cannot both think they made version n.
type Store interface {
	// Load returns every stored version, in any order.
	Load(ctx context.Context) ([]Rule, error)
	// Put stores r as a new version of rule r.ID.
	Put(ctx context.Context, r Rule) error
}

// ErrVersion is Put's answer to a version that is not newer than the stored one.
var ErrVersion = errors.New("skills: rule version is not newer than the stored one")

// FileStore is a Store in one JSON file, rewritten whole on every Put
// (temp file, fsync, rename): small, and a crash leaves either the old or
// the new file. The lead replaces it with a NATS KV store in the gateway.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore stores rules in path (created on the first Put).
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

type fileDoc struct {
	Rules []Rule `json:"rules"`
}

// Load reads every version; a missing file is an empty store.
func (s *FileStore) Load(ctx context.Context) ([]Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	return doc.Rules, err
}

// Put appends r after checking its version against the stored ones.
func (s *FileStore) Put(ctx context.Context, r Rule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	for _, old := range doc.Rules {
		if old.ID == r.ID && old.Version >= r.Version {
			return fmt.Errorf("skills.FileStore.Put %s v%d (stored v%d): %w", r.ID, r.Version, old.Version, ErrVersion)
		}
	}
	doc.Rules = append(doc.Rules, r)
	return s.write(doc)
}

func (s *FileStore) read() (fileDoc, error) {
	var doc fileDoc
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("skills.FileStore: %w", err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("skills.FileStore %s: %w", s.path, err)
	}
	return doc, nil
}

func (s *FileStore) write(doc fileDoc) error {
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return fmt.Errorf("skills.FileStore: %w", err)
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("skills.FileStore: %w", err)
	}
	f, err := os.CreateTemp(dir, ".skills-*.json")
	if err != nil {
		return fmt.Errorf("skills.FileStore: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		return fmt.Errorf("skills.FileStore: %w", err)
	}
	return nil
}
