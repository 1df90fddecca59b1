package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/kernelgate/kernelgate/export"
)

// LogDir is where the gateway's sink writes under its data directory.
const LogDir = "parquet"

// ErrNoLog: the data directory holds no log at all.
var ErrNoLog = errors.New("no log")

// logRoot is dataDir's log directory, or an error wrapping ErrNoLog.
func logRoot(dataDir string) (string, error) {
	root := filepath.Join(dataDir, LogDir)
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w under %s (no %s/ directory: is it the gateway's --data directory?)", ErrNoLog, dataDir, LogDir)
	}
	return root, nil
}

// partFiles lists table's finished part files under root whose date
// partition f can match, sorted. Dot files (parts being written) are skipped.
func partFiles(root, table string, f Filter) ([]string, error) {
	tdir := filepath.Join(root, "table="+table)
	dates, err := os.ReadDir(tdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var out []string
	for _, d := range dates {
		date, ok := strings.CutPrefix(d.Name(), "date=")
		if !d.IsDir() || !ok || !f.date(date) {
			continue
		}
		files, err := os.ReadDir(filepath.Join(tdir, d.Name()))
		if err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		// Parts a compacted file holds, left by a compaction cut short.
		replaced, err := export.PartsReplaced(filepath.Join(tdir, d.Name()))
		if err != nil {
			return nil, fmt.Errorf("dataset: %w", err)
		}
		for _, p := range files {
			name := p.Name()
			if p.Type().IsRegular() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".parquet") && !replaced[name] {
				out = append(out, filepath.Join(tdir, d.Name(), name))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// tableExists reports whether root holds a table= directory for table.
func tableExists(root, table string) bool {
	fi, err := os.Stat(filepath.Join(root, "table="+table))
	return err == nil && fi.IsDir()
}

// readTable reads the rows of table that keep accepts, in file order, and
// the files read. Columns a file lacks (older schema versions) read as
// zero values; a row type that knows an older schema's meanings
// (Normalize) is brought to the current one first.
func readTable[T any](log *slog.Logger, root, table string, f Filter, keep func(T) bool) ([]T, []string, error) {
	return readParts(log, root, table, f, func(p string) ([]T, error) {
		rows, err := export.ReadRows[T](p)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if n, ok := any(&rows[i]).(interface{ Normalize() }); ok {
				n.Normalize()
			}
		}
		return slices.DeleteFunc(rows, func(r T) bool { return !keep(r) }), nil
	})
}

// readParts reads each part of table that f selects with read, in file
// order: the rows, and the files read. A file that is not valid Parquet is
// moved aside (export.Quarantine) and left out, so that one bad file does
// not fail every reader.
func readParts[T any](log *slog.Logger, root, table string, f Filter, read func(path string) ([]T, error)) ([]T, []string, error) {
	files, err := partFiles(root, table, f)
	if err != nil {
		return nil, nil, err
	}
	var all []T
	done := files[:0:0]
	for _, p := range files {
		rows, err := read(p)
		if export.IsCorrupt(err) {
			if _, qerr := export.Quarantine(root, p, err, log); qerr != nil {
				return nil, nil, fmt.Errorf("dataset: %w (and moving it aside failed: %v)", err, qerr)
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		done = append(done, p)
		all = append(all, rows...)
	}
	return all, done, nil
}

// writeParquet writes rows (possibly none: the file still has the schema)
// to path.
func writeParquet[T any](path string, rows []T, meta map[string]string) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd)}
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	w := parquet.NewGenericWriter[T](fh, opts...)
	if err := export.WriteRows(w, rows); err != nil {
		fh.Close()
		return fmt.Errorf("dataset: write %s: %w", filepath.Base(path), err)
	}
	if err := w.Close(); err != nil {
		fh.Close()
		return fmt.Errorf("dataset: write %s: %w", filepath.Base(path), err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("dataset: write %s: %w", filepath.Base(path), err)
	}
	return nil
}
