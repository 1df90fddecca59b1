package export

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The sink writes one part per table, partition and batch: a day of steady
// traffic is thousands of small files, each one row group, which data
// loaders open one by one (20 such files took 573 KB where one zstd file
// held the same rows in 37 KB). Compact rewrites a partition's
// parts into one file with large row groups, rows and their order unchanged.

// CompactRowGroup is the most rows a compacted file puts in one row group.
const CompactRowGroup = 128 << 10

// compactWriter names the files Compact writes (part-compact-<unixnano>-0).
const compactWriter = "compact"

// PartitionCompaction is what Compact did to one partition.
type PartitionCompaction struct {
	Dir          string // root-relative: table=<t>/date=<d>
	FilesBefore  int
	FilesAfter   int
	Rows         int64
	BytesBefore  int64
	BytesAfter   int64
	SkippedFiles []string // parts whose schema differs from the partition's newest (kept as they are)
	Quarantined  []string // parts that are not valid Parquet, moved aside (quarantine.go), root-relative
}

// CompactOptions chooses the partitions: those dated before Before (zero:
// every date) and, when Tables is not empty, of those tables only.
type CompactOptions struct {
	Before time.Time
	Tables []string
}

// Compact rewrites every chosen partition under root that holds more than one
// part into one file, and calls progress after each partition.
//
// The new file is written beside the parts (temp name, fsync), a hidden
// marker naming the parts it replaces is written, the file is renamed into
// place, and the parts are removed, then the marker. A crash in between
// leaves file, parts and marker: the exports skip parts a marker names once
// its file exists (PartsReplaced), and the next Compact finishes the job.
// Readers that know nothing of markers (DuckDB, pyarrow) could count such
// rows twice until then. The new name carries the newest input's write time,
// so the sink's dedup seed reads it as it read them.
// A part in flight (a temp name) is not a part: a running sink is safe, but
// a day still being written gains new parts after, so the default policy
// (`kernelgate compact`) takes days before today.
func Compact(root string, opts CompactOptions, progress func(PartitionCompaction)) ([]PartitionCompaction, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "table=*", "date=*"))
	if err != nil {
		return nil, fmt.Errorf("export.Compact: %w", err)
	}
	slices.Sort(dirs)
	var out []PartitionCompaction
	for _, dir := range dirs {
		table := strings.TrimPrefix(filepath.Base(filepath.Dir(dir)), "table=")
		date, err := time.Parse(time.DateOnly, strings.TrimPrefix(filepath.Base(dir), "date="))
		if err != nil || (len(opts.Tables) > 0 && !slices.Contains(opts.Tables, table)) ||
			(!opts.Before.IsZero() && !date.Before(opts.Before)) {
			continue
		}
		pc, err := compactPartition(root, dir)
		if err != nil {
			return out, err
		}
		pc.Dir, _ = filepath.Rel(root, dir)
		out = append(out, pc)
		if progress != nil {
			progress(pc)
		}
	}
	return out, nil
}

type compactInput struct {
	path    string
	written time.Time
	size    int64
	f       *os.File
	pf      *parquet.File
}

func compactPartition(root, dir string) (pc PartitionCompaction, err error) {
	if err := finishMarked(dir); err != nil {
		return pc, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return pc, fmt.Errorf("export.Compact: %w", err)
	}
	var parts []*compactInput
	defer func() {
		for _, p := range parts {
			if p.f != nil {
				p.f.Close()
			}
		}
	}()
	for _, e := range entries {
		written, ok := partTime(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		p := &compactInput{path: filepath.Join(dir, e.Name()), written: written}
		if p.f, err = os.Open(p.path); err != nil {
			return pc, fmt.Errorf("export.Compact: %w", err)
		}
		st, err := p.f.Stat()
		if err != nil {
			return pc, fmt.Errorf("export.Compact: %w", err)
		}
		p.size = st.Size()
		if p.pf, err = openParquet(p.f, p.size); err != nil {
			p.f.Close()
			q, qerr := Quarantine(root, p.path, &CorruptError{Path: p.path, Err: err}, nil)
			if qerr != nil {
				return pc, fmt.Errorf("export.Compact %s: %w (and moving it aside failed: %v)", p.path, err, qerr)
			}
			rel, _ := filepath.Rel(root, q)
			pc.Quarantined = append(pc.Quarantined, rel)
			continue
		}
		parts = append(parts, p)
	}
	// Oldest first: the rows keep the order the sink wrote them in.
	slices.SortStableFunc(parts, func(a, b *compactInput) int { return a.written.Compare(b.written) })
	pc.FilesBefore, pc.FilesAfter = len(parts), len(parts)
	for _, p := range parts {
		pc.BytesBefore += p.size
		pc.Rows += p.pf.NumRows()
	}
	pc.BytesAfter = pc.BytesBefore
	if len(parts) < 2 {
		return pc, nil
	}
	// One file holds one schema: the newest part's (the sink's current one).
	// Parts of another schema version stay as they are.
	schema := parts[len(parts)-1].pf.Schema()
	var same []*compactInput
	for _, p := range parts {
		if parquet.EqualNodes(p.pf.Schema(), schema) {
			same = append(same, p)
		} else {
			pc.SkippedFiles = append(pc.SkippedFiles, filepath.Base(p.path))
		}
	}
	if len(same) < 2 {
		return pc, nil
	}
	name := partName(compactWriter, same[len(same)-1].written, 0)
	size, rows, err := writeMerged(dir, name, schema, same, func() error { return writeMarker(dir, name, same) })
	if err != nil {
		return pc, err
	}
	var want int64
	for _, p := range same {
		want += p.pf.NumRows()
	}
	if rows != want {
		os.Remove(filepath.Join(dir, name))
		return pc, fmt.Errorf("export.Compact %s: wrote %d rows of %d; parts kept", dir, rows, want)
	}
	for _, p := range same {
		if filepath.Base(p.path) == name { // compacted before, and nothing newer came
			continue
		}
		p.f.Close()
		p.f = nil
		if err := os.Remove(p.path); err != nil {
			return pc, fmt.Errorf("export.Compact: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return pc, fmt.Errorf("export.Compact: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, markerName(name))); err != nil {
		return pc, fmt.Errorf("export.Compact: %w", err)
	}
	pc.FilesAfter = len(parts) - len(same) + 1
	pc.BytesAfter = pc.BytesBefore - sumSize(same) + size
	return pc, nil
}

func sumSize(ps []*compactInput) (n int64) {
	for _, p := range ps {
		n += p.size
	}
	return n
}

// writeMerged writes the rows of parts, in order, to dir/name atomically,
// with the first part's key/value metadata, calling beforeRename once the
// file is durable under its temp name; it returns the file's size and the
// rows written.
func writeMerged(dir, name string, schema *parquet.Schema, parts []*compactInput, beforeRename func() error) (size, rows int64, err error) {
	tmp := filepath.Join(dir, tempName(name))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("export.Compact: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	opts := []parquet.WriterOption{schema, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(CompactRowGroup)}
	for _, kv := range parts[0].pf.Metadata().KeyValueMetadata {
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	w := parquet.NewWriter(f, opts...)
	for _, p := range parts {
		for _, rg := range p.pf.RowGroups() {
			r := rg.Rows()
			n, err := parquet.CopyRows(w, r)
			r.Close()
			rows += n
			if err != nil {
				return 0, rows, fmt.Errorf("export.Compact %s: copying %s: %w", dir, filepath.Base(p.path), err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return 0, rows, fmt.Errorf("export.Compact %s: close writer: %w", dir, err)
	}
	if err := f.Sync(); err != nil {
		return 0, rows, fmt.Errorf("export.Compact %s: fsync: %w", dir, err)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, rows, fmt.Errorf("export.Compact: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, rows, fmt.Errorf("export.Compact: %w", err)
	}
	if err := beforeRename(); err != nil {
		return 0, rows, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return 0, rows, fmt.Errorf("export.Compact: %w", err)
	}
	return st.Size(), rows, nil
}

// markerName is the hidden file naming the parts a compacted file replaces.
func markerName(name string) string { return "." + name + ".replaces" }

func writeMarker(dir, name string, parts []*compactInput) error {
	var names []string
	for _, p := range parts {
		names = append(names, filepath.Base(p.path))
	}
	path := filepath.Join(dir, markerName(name))
	if err := os.WriteFile(path, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("export.Compact: %w", err)
	}
	f, err := os.Open(path)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("export.Compact: marker: %w", err)
	}
	return nil
}

// PartsReplaced returns the parts in dir that a compacted file already
// holds (its marker names them and the file exists): a reader skips them.
func PartsReplaced(dir string) (map[string]bool, error) {
	markers, err := filepath.Glob(filepath.Join(dir, ".part-*.parquet.replaces"))
	if err != nil {
		return nil, fmt.Errorf("export.PartsReplaced: %w", err)
	}
	out := map[string]bool{}
	for _, m := range markers {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "."), ".replaces")
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			continue // the compaction stopped before its file was in place: the parts stand
		}
		data, err := os.ReadFile(m)
		if err != nil {
			return nil, fmt.Errorf("export.PartsReplaced: %w", err)
		}
		for _, p := range strings.Fields(string(data)) {
			if p != name {
				out[p] = true
			}
		}
	}
	return out, nil
}

// finishMarked completes compactions a crash interrupted: the parts a marker
// names go once its file exists; a marker without its file goes (with the
// temp file), and the parts stay.
func finishMarked(dir string) error {
	replaced, err := PartsReplaced(dir)
	if err != nil {
		return err
	}
	for p := range replaced {
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("export.Compact: %w", err)
		}
	}
	markers, _ := filepath.Glob(filepath.Join(dir, ".part-*.parquet.replaces"))
	for _, m := range markers {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "."), ".replaces")
		os.Remove(filepath.Join(dir, tempName(name)))
		if err := os.Remove(m); err != nil {
			return fmt.Errorf("export.Compact: %w", err)
		}
	}
	if len(markers) > 0 {
		return syncDir(dir)
	}
	return nil
}

// openParquet is parquet.OpenFile, with a decoder panic (malformed input)
// as an error.
func openParquet(f *os.File, size int64) (pf *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return parquet.OpenFile(f, size)
}
