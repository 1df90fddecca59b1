package skills

import (
	"bytes"
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

// FileStore is a Store in one JSON file ({"rules": [every version]}),
// rewritten whole on every Put (temp file, fsync, rename), so a crash leaves
// either the old or the new file. The file is read once and then kept in
// memory (each version already encoded): one process owns it. The lead
// replaces it with a NATS KV store in the gateway.
type FileStore struct {
	path string

	mu      sync.Mutex
	read    bool
	enc     [][]byte       // each stored version, JSON-encoded, in Put order
	latest  map[string]int // rule id -> latest stored version
	decoded []Rule
}

// NewFileStore stores rules in path (created on the first Put).
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Load returns every version; a missing file is an empty store.
func (s *FileStore) Load(ctx context.Context) ([]Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.readLocked(); err != nil {
		return nil, err
	}
	out := make([]Rule, len(s.decoded))
	for i, r := range s.decoded {
		out[i] = r.clone()
	}
	return out, nil
}

// Put appends r after checking its version against the stored ones.
func (s *FileStore) Put(ctx context.Context, r Rule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.readLocked(); err != nil {
		return err
	}
	if v, ok := s.latest[r.ID]; ok && v >= r.Version {
		return fmt.Errorf("skills.FileStore.Put %s v%d (stored v%d): %w", r.ID, r.Version, v, ErrVersion)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("skills.FileStore: %w", err)
	}
	enc := append(s.enc[:len(s.enc):len(s.enc)], b)
	if err := s.write(enc); err != nil {
		return err
	}
	s.enc, s.latest[r.ID] = enc, r.Version
	s.decoded = append(s.decoded, r.clone())
	return nil
}

func (s *FileStore) readLocked() error {
	if s.read {
		return nil
	}
	var doc struct {
		Rules []json.RawMessage `json:"rules"`
	}
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("skills.FileStore: %w", err)
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("skills.FileStore %s: %w", s.path, err)
		}
	}
	latest, enc, decoded := map[string]int{}, [][]byte(nil), []Rule(nil)
	for _, raw := range doc.Rules {
		var r Rule
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("skills.FileStore %s: %w", s.path, err)
		}
		enc, decoded = append(enc, raw), append(decoded, r)
		latest[r.ID] = max(latest[r.ID], r.Version)
	}
	s.latest, s.enc, s.decoded, s.read = latest, enc, decoded, true
	return nil
}

func (s *FileStore) write(enc [][]byte) error {
	var buf bytes.Buffer
	buf.WriteString("{\"rules\": [\n")
	buf.Write(bytes.Join(enc, []byte(",\n")))
	buf.WriteString("\n]}\n")
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
	_, err = f.Write(buf.Bytes())
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
