package redteam

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Canaries are secrets planted on the host for a run: files a leak class
// tries to read and, by the caller, an environment variable. No verdict
// may carry a secret (Build).
type Canaries struct {
	Files   []string // paths of the planted files
	Secrets []string // their contents, and any other planted secret
}

// NewSecret is a fresh random secret, recognisable in a report.
func NewSecret() string { return "kgrt-canary-" + rand.Text() }

// Plant writes one canary file with a fresh secret into each dir that
// exists and is writable (a dir that is not is skipped: a host without
// /dev/shm). Remove deletes them.
func Plant(dirs ...string) (*Canaries, error) {
	c := &Canaries{}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		secret := NewSecret()
		f, err := os.CreateTemp(d, "kernelgate-redteam-canary-")
		if err != nil {
			continue
		}
		_, werr := f.WriteString(secret + "\n")
		cerr := f.Close()
		if werr != nil || cerr != nil {
			os.Remove(f.Name())
			c.Remove()
			return nil, fmt.Errorf("redteam.Plant: %s: %w", f.Name(), errors.Join(werr, cerr))
		}
		// Readable by anyone: what keeps it from an evaluation must be the
		// sandbox, not its mode.
		os.Chmod(f.Name(), 0o644)
		c.Files = append(c.Files, filepath.Clean(f.Name()))
		c.Secrets = append(c.Secrets, secret)
	}
	return c, nil
}

// Remove deletes the planted files.
func (c *Canaries) Remove() {
	if c == nil {
		return
	}
	for _, f := range c.Files {
		os.Remove(f)
	}
}
