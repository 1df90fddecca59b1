package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/tasks"
)

// SchemaVersion is the version of the export layouts (files, columns,
// manifest). Within a version columns and manifest fields are only added.
const SchemaVersion = "1"

// ManifestFile is the manifest's name in every export directory.
const ManifestFile = "manifest.json"

// Source is what an export reads.
type Source struct {
	DataDir string // the gateway's data directory; the log is DataDir/parquet
	// Tasks are the suites: verl's prompts, and the prompts of log rows
	// written without task_source (matched by task hash).
	Tasks []tasks.Task
	// TaskFiles names the file of a task id, for the manifest (optional:
	// a task without one is listed as task:<id>).
	TaskFiles map[string]string
	// SuitesLeftOut names the suites found but not read because they are
	// not among the defaults (DefaultSuites): verl's manifest says so.
	SuitesLeftOut []string
	Version       string           // kernelgate's, for the manifest
	ExportID      string           // the manifest's export_id (POST /v1/exports); "" for none
	Now           func() time.Time // nil: time.Now
	// Log hears of part files moved aside as unreadable (export.Quarantine);
	// nil: they are moved all the same, silently.
	Log *slog.Logger
}

// ErrOutNotEmpty: the output directory holds files and force was not given.
var ErrOutNotEmpty = errors.New("output directory is not empty")

// Write builds spec's export from src into the directory out (created; an
// existing one must be empty, or an earlier export with force: then it is
// replaced). The export
// is built in a temporary sibling and renamed into place, so on an error
// nothing is left at out.
func Write(ctx context.Context, spec Spec, src Source, out string, force bool) (*Manifest, error) {
	if out == "" {
		return nil, inputErr("out", "no output directory")
	}
	if err := checkOut(out, force); err != nil {
		return nil, err
	}
	b := &build{ctx: ctx, spec: spec, src: src, m: newManifest(spec, src)}
	if spec.Format != FormatVerl {
		root, err := logRoot(src.DataDir)
		if err != nil {
			return nil, err
		}
		b.root = root
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
		return nil, fmt.Errorf("dataset.Write: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("dataset.Write: %w", err)
	}
	b.dir = tmp
	if err := b.run(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("dataset.Write %s: %w", spec.Format, err)
	}
	if err := commit(tmp, out, b.m); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return b.m, nil
}

// checkOut refuses an out that is a file, or a non-empty one unless force
// is given and it is an earlier export.
func checkOut(out string, force bool) error {
	fi, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dataset.Write: %w", err)
	}
	if !fi.IsDir() {
		return inputErr("out", "--out %s is a file, not a directory", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("dataset.Write: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if !force {
		return &InputError{Field: "out", Msg: fmt.Sprintf("%s: %s (--force replaces an earlier export)", ErrOutNotEmpty, out)}
	}
	// force deletes out: only an earlier export, never a directory of other files.
	if _, err := os.Stat(filepath.Join(out, ManifestFile)); err != nil {
		return &InputError{Field: "out", Msg: fmt.Sprintf("%s: %s holds no %s, so it is no earlier export; --force will not replace it", ErrOutNotEmpty, out, ManifestFile)}
	}
	return nil
}

// commit writes the manifest into tmp and renames tmp to out.
func commit(tmp, out string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("dataset.Write: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ManifestFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("dataset.Write: %w", err)
	}
	if err := os.RemoveAll(out); err != nil { // empty, or force was given
		return fmt.Errorf("dataset.Write: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("dataset.Write: %w", err)
	}
	return nil
}

// build is one export in progress.
type build struct {
	ctx  context.Context
	spec Spec
	src  Source
	root string // the log (not for verl)
	dir  string // where the files go
	m    *Manifest
}

func (b *build) log() *slog.Logger {
	if b.src.Log != nil {
		return b.src.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (b *build) run() error {
	switch b.spec.Format {
	case FormatVerl:
		return b.verl()
	case FormatSFT:
		return b.sft()
	case FormatDPO:
		return b.dpo()
	case FormatSkills:
		return b.skills()
	case FormatArrow:
		return b.arrow()
	case FormatTrajectories:
		return b.trajectories()
	case FormatSearchTrees:
		return b.searchTrees()
	}
	return inputErr("format", "unknown format %q", b.spec.Format)
}

// output writes rows to name in the export and counts them.
func output[T any](b *build, name string, rows []T) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	meta := map[string]string{"kernelgate.export_format": string(b.spec.Format), "kernelgate.export_schema_version": SchemaVersion}
	if err := writeParquet(filepath.Join(b.dir, name), rows, meta); err != nil {
		return err
	}
	b.m.addFile(name, len(rows))
	return nil
}

// logSources adds the log files read to the manifest, relative to the data dir.
func (b *build) logSources(files []string) {
	for _, f := range files {
		if rel, err := filepath.Rel(b.src.DataDir, f); err == nil {
			f = rel
		}
		b.m.Sources = append(b.m.Sources, filepath.ToSlash(f))
	}
	slices.Sort(b.m.Sources)
}
