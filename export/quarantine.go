package export

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// One unreadable Parquet file must not stop the log: a crash mid-write
// cannot leave one (parts are renamed into place once complete), but a disk
// error, a bad copy or a hand edit can. Readers that find one (the exports,
// the sink's dedup seed, compaction, `kernelgate doctor --data --fix`) move
// it aside into QuarantineDir, keeping its partition path, log it, and go on
// without its rows. /metrics counts the files there
// (kernelgate_parquet_quarantined_files).

// QuarantineDir is where unreadable part files go, under the log's root. A
// hidden name: Spark, pyarrow and DuckDB skip it when they read the root.
const QuarantineDir = ".quarantine"

// CorruptError is a part file that is not valid Parquet (as opposed to one
// that could not be opened at all: a missing file, a permission).
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string { return fmt.Sprintf("%s: not valid Parquet: %v", e.Path, e.Err) }
func (e *CorruptError) Unwrap() error { return e.Err }

// IsCorrupt reports whether err says a file is not valid Parquet.
func IsCorrupt(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}

// Quarantine moves the part file path, found under root, to
// root/QuarantineDir/<its path under root>, and logs why. It returns the new
// path. A file that is already gone (another reader moved it) is no error.
func Quarantine(root, path string, cause error, log *slog.Logger) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("export.Quarantine: %s is not under %s", path, root)
	}
	dst := filepath.Join(root, QuarantineDir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("export.Quarantine: %w", err)
	}
	if err := os.Rename(path, dst); err != nil {
		if os.IsNotExist(err) {
			return dst, nil
		}
		return "", fmt.Errorf("export.Quarantine: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("export.Quarantine: %w", err)
	}
	if log != nil {
		log.Error("unreadable Parquet file moved aside; its rows are left out until it is repaired",
			"path", path, "quarantined", dst, "err", cause)
	}
	return dst, nil
}

// QuarantinedFiles counts the files in root's quarantine.
func QuarantinedFiles(root string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(root, QuarantineDir), func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}
