package synth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name inside the output directory.
const ManifestName = "synth.json"

// ErrNotEmpty: the output directory already holds task files.
var ErrNotEmpty = errors.New("already holds .py files")

// Write creates dir if needed and writes the tasks and synth.json. It
// refuses a dir that already holds .py files unless force, because mixing
// two runs would make a suite that no flags reproduce; with force it
// overwrites but leaves other files in place (it deletes nothing).
// written is called after each file.
func Write(dir string, tasks []Task, m Manifest, force bool, written func(path string)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("synth.Write: %w", err)
	}
	if !force {
		old, err := filepath.Glob(filepath.Join(dir, "*.py"))
		if err != nil {
			return fmt.Errorf("synth.Write: %w", err)
		}
		if len(old) > 0 {
			return fmt.Errorf("%s %w (%d, e.g. %s): pick an empty directory or pass --force",
				dir, ErrNotEmpty, len(old), filepath.Base(old[0]))
		}
	}
	for _, t := range tasks {
		path := filepath.Join(dir, t.File)
		if err := os.WriteFile(path, t.Source, 0o644); err != nil {
			return fmt.Errorf("synth.Write: %w", err)
		}
		if written != nil {
			written(path)
		}
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("synth.Write: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("synth.Write: %w", err)
	}
	return nil
}
