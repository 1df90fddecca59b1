package harness

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// pyFS holds the Python evaluator (the kgharness package and its subpackages,
// one level deep), so the binary is all a user installs besides a Python with
// torch and triton.
//
//go:embed py/kgharness/*.py py/kgharness/*/*.py
var pyFS embed.FS

// pyPatterns are pyFS's files, as the embed directive names them.
var pyPatterns = []string{"py/kgharness/*.py", "py/kgharness/*/*.py"}

// ExtractPy writes the embedded kgharness package under
// cacheDir/py-<sha256 prefix>/kgharness and returns the directory to put on
// PYTHONPATH. The directory name is content-addressed, so an existing one is
// reused as is; a new one is written to a temp dir and renamed into place,
// so concurrent starts (several zygotes, several processes) never see a
// half-written package. cacheDir "" means os.UserCacheDir()/kernelgate.
func ExtractPy(cacheDir string) (string, error) {
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("harness.ExtractPy: %w (set %s)", err, EnvCacheDir)
		}
		cacheDir = filepath.Join(base, "kernelgate")
	}
	files, sum, err := pyFiles()
	if err != nil {
		return "", fmt.Errorf("harness.ExtractPy: %w", err)
	}
	root := filepath.Join(cacheDir, "py-"+sum[:16])
	if _, err := os.Stat(filepath.Join(root, "kgharness")); err == nil {
		return root, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("harness.ExtractPy: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".py-tmp-")
	if err != nil {
		return "", fmt.Errorf("harness.ExtractPy: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	pkg := filepath.Join(tmp, "kgharness")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		return "", fmt.Errorf("harness.ExtractPy: %w", err)
	}
	for _, name := range files {
		data, err := readPy(name)
		if err != nil {
			return "", fmt.Errorf("harness.ExtractPy: %w", err)
		}
		dst := filepath.Join(pkg, filepath.FromSlash(strings.TrimPrefix(name, "py/kgharness/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", fmt.Errorf("harness.ExtractPy: %w", err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return "", fmt.Errorf("harness.ExtractPy: %w", err)
		}
	}
	if err := os.Rename(tmp, root); err != nil {
		// Another process won the race: its copy has the same content.
		if _, statErr := os.Stat(filepath.Join(root, "kgharness")); statErr == nil {
			return root, nil
		}
		return "", fmt.Errorf("harness.ExtractPy: %w", err)
	}
	return root, nil
}

// EmbeddedSum is the first 16 hex digits of the embedded kgharness package's
// hash (names and contents): `kernelgate version` prints it, so a script can
// tell whether a binary runs the working tree's harness or an older build's
// (scripts/measure/check_binary.py computes the same from the files).
func EmbeddedSum() string {
	_, sum, err := pyFiles()
	if err != nil {
		return "unknown"
	}
	return sum[:16]
}

// pyFiles lists the embedded files (sorted by path) and hashes names and contents.
func pyFiles() ([]string, string, error) {
	var files []string
	for _, pattern := range pyPatterns {
		matched, err := fs.Glob(pyFS, pattern)
		if err != nil {
			return nil, "", err
		}
		files = append(files, matched...)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, name := range files {
		data, err := readPy(name)
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}
