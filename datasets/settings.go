package datasets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SettingsFile is the optional file in a suite directory that says what the
// suite needs of `kernelgate tasks check` (datasets/heavy has one).
const SettingsFile = "suite.json"

// Settings is what a suite declares about itself in its suite.json. A suite
// without the file has the zero value: the harness's defaults.
type Settings struct {
	// MaxMB is the most inputs + parameters + outputs of one call (MiB) a
	// task of the suite may need; 0 keeps the harness's default (4096). A
	// suite sized for a large GPU raises it so its tasks are not rejected as
	// "does not fit memory", on a CPU too, where they are checked at shape
	// level only.
	MaxMB float64 `json:"max_mb,omitempty"`
}

// ReadSettings reads dir's suite.json; a missing file is the zero Settings.
// Unknown fields and negative limits are errors, so a typo cannot silently
// leave a suite on the defaults.
func ReadSettings(dir string) (Settings, error) {
	path := filepath.Join(dir, SettingsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("datasets.ReadSettings: %w", err)
	}
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("datasets.ReadSettings: %s: %w", path, err)
	}
	if s.MaxMB < 0 {
		return Settings{}, fmt.Errorf("datasets.ReadSettings: %s: max_mb %g is negative", path, s.MaxMB)
	}
	return s, nil
}
