package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// partDir is root/table=<table>/date=<date>.
func partDir(root, table, date string) string {
	return filepath.Join(root, "table="+table, "date="+date)
}

// partName is part-<writerID>-<unixnano>-<seq>.parquet. The time is when
// the file was written (the dedup seed reads it back), not the events'.
func partName(writerID string, t time.Time, seq uint64) string {
	return fmt.Sprintf("part-%s-%d-%d.parquet", writerID, t.UnixNano(), seq)
}

// partTime parses the write time out of a part name; ok is false for names
// this package did not write.
func partTime(name string) (time.Time, bool) {
	if !strings.HasPrefix(name, "part-") || !strings.HasSuffix(name, ".parquet") {
		return time.Time{}, false
	}
	fields := strings.Split(strings.TrimSuffix(name, ".parquet"), "-")
	if len(fields) < 4 { // part, writer (may hold '-'), unixnano, seq
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(fields[len(fields)-2], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// tempName is the name a part is written under before its rename: a
// leading dot (Spark, pyarrow and DuckDB skip hidden files) and a .tmp suffix.
func tempName(name string) string { return "." + name + ".tmp" }

// WriteRows writes rows through w one row at a time (the schema's
// Deconstruct), not through w.Write: parquet-go's batch path (v0.32.1)
// writes some zero values of an optional value-type field ("" of a string
// tagged optional) as values instead of nulls, depending on where they fall
// in a batch; the row path writes every one as null.
func WriteRows[T any](w *parquet.GenericWriter[T], rows []T) error {
	schema := w.Schema()
	batch := make([]parquet.Row, 0, min(len(rows), 256))
	for i := range rows {
		batch = append(batch, schema.Deconstruct(nil, &rows[i]))
		if len(batch) == cap(batch) || i == len(rows)-1 {
			if _, err := w.WriteRows(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// writePart writes rows to dir/name atomically: a temp file in the same
// directory, fsync'd, renamed, then the directory fsync'd. Once it returns
// nil the file is complete and durable under its final name; on an error
// no file is left under that name.
func writePart[T any](dir, name string, rows []T, meta map[string]string) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export.writePart: %w", err)
	}
	if err := syncParents(dir); err != nil {
		return err
	}
	tmp := filepath.Join(dir, tempName(name))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("export.writePart: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd)}
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	if err := WriteRows(w, rows); err != nil {
		return fmt.Errorf("export.writePart %s: write: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("export.writePart %s: close writer: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("export.writePart %s: fsync: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export.writePart %s: close: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("export.writePart %s: rename: %w", name, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("export.writePart %s: %w", name, err)
	}
	return nil
}

// syncParents fsyncs dir's parent and grandparent, so partition
// directories created by MkdirAll survive a crash along with their files.
// Cheap: it runs once per file, and those are a few per batch.
func syncParents(dir string) error {
	for _, d := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("export.writePart: %w", err)
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// ReadRows reads every row of a Parquet file into T (columns matched by
// name; columns of the file that T lacks are not decoded into it). A file
// that is not valid Parquet is a *CorruptError (quarantine.go).
func ReadRows[T any](path string) (rows []T, err error) {
	err = withParquet(path, "export.ReadRows", func(pf *parquet.File) error {
		r := parquet.NewGenericReader[T](pf)
		defer r.Close()
		rows = make([]T, r.NumRows())
		got := 0
		for got < len(rows) {
			n, err := r.Read(rows[got:])
			got += n
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return &CorruptError{Path: path, Err: err}
			}
			if n == 0 {
				return &CorruptError{Path: path, Err: fmt.Errorf("no progress at row %d of %d", got, len(rows))}
			}
		}
		rows = rows[:got]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// ReadRowsAt reads the rows at the given indexes (file order, from 0) of a
// Parquet file into T, seeking to each: a reader that wants a few rows of
// wide columns decodes only the pages that hold them. Errors as ReadRows.
func ReadRowsAt[T any](path string, at []int64) (rows []T, err error) {
	err = withParquet(path, "export.ReadRowsAt", func(pf *parquet.File) error {
		r := parquet.NewGenericReader[T](pf)
		defer r.Close()
		one := make([]T, 1)
		for _, row := range at {
			if err := r.SeekToRow(row); err != nil {
				return &CorruptError{Path: path, Err: err}
			}
			if n, err := r.Read(one); n != 1 {
				return &CorruptError{Path: path, Err: fmt.Errorf("row %d: read %d rows: %v", row, n, err)}
			}
			rows = append(rows, one[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// withParquet opens path as a Parquet file for read. parquet-go panics on
// some malformed input (an index past a buffer): a bad file is a
// *CorruptError, not a crash of the server.
func withParquet(path, who string, read func(*parquet.File) error) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = &CorruptError{Path: path, Err: fmt.Errorf("decoder panic: %v", r)}
		}
	}()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return &CorruptError{Path: path, Err: err}
	}
	return read(pf)
}

// VerifyFile reads every column of every row of a Parquet file, as a
// reader of any table would; nil means it reads back whole. A file that is
// not valid Parquet is a *CorruptError.
func VerifyFile(path string) (rows int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("export.VerifyFile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("export.VerifyFile: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = &CorruptError{Path: path, Err: fmt.Errorf("decoder panic: %v", r)}
		}
	}()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, &CorruptError{Path: path, Err: err}
	}
	buf := make([]parquet.Row, 256)
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		for {
			n, err := rr.ReadRows(buf)
			rows += int64(n)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rr.Close()
				return rows, &CorruptError{Path: path, Err: err}
			}
		}
		rr.Close()
	}
	if rows != pf.NumRows() {
		return rows, &CorruptError{Path: path, Err: fmt.Errorf("read %d rows of the %d its footer counts", rows, pf.NumRows())}
	}
	return rows, nil
}
