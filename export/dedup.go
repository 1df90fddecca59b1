package export

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// seenSet remembers the event ids already written (with when their file
// was written) and the part files whose ids it has read, for window back
// from the newest write it knows of. Counting back from the newest write
// rather than from now keeps, after a long outage, the ids written just
// before the crash: those are the ones redelivered at restart.
type seenSet struct {
	window time.Duration
	ids    map[string]time.Time
	files  map[string]time.Time // path -> write time
	newest time.Time
	pruned time.Time // newest at the last prune
}

func newSeenSet(window time.Duration) *seenSet {
	return &seenSet{window: window, ids: map[string]time.Time{}, files: map[string]time.Time{}}
}

func (s *seenSet) has(id string) bool { _, ok := s.ids[id]; return ok }

func (s *seenSet) add(written time.Time, ids ...string) {
	if written.After(s.newest) {
		s.newest = written
	}
	for _, id := range ids {
		if id == "" {
			continue // cannot be deduplicated; never a match
		}
		if t, ok := s.ids[id]; !ok || written.After(t) {
			s.ids[id] = written
		}
	}
}

// prune forgets what was written more than window before the newest write.
// It walks the whole set, so it runs once per 1% of window, not per batch.
func (s *seenSet) prune() {
	if s.newest.Sub(s.pruned) < s.window/100 {
		return
	}
	s.pruned = s.newest
	cut := s.newest.Add(-s.window)
	for id, t := range s.ids {
		if t.Before(cut) {
			delete(s.ids, id)
		}
	}
	for p, t := range s.files {
		if t.Before(cut) {
			delete(s.files, p)
		}
	}
}

// eventIDRow reads only the event_id column of any table.
type eventIDRow struct {
	EventID string `parquet:"event_id"`
}

// refresh reads the event ids of part files under root it has not read yet
// and that were written within window of the newest part file found (not
// of now: after a long outage the files written just before the crash are
// the ones that matter). It also removes this writer's stale temp files,
// left by a crash between create and rename.
//
// A part file that is not valid Parquet is quarantined (quarantine.go), one
// that cannot be read is logged and skipped: a corrupt file must not stop
// the log; a directory that cannot be listed is an error.
func (s *seenSet) refresh(ctx context.Context, root, writerID string, log *slog.Logger) error {
	parts, err := listParts(ctx, root, writerID, log)
	if err != nil {
		return err
	}
	var newest time.Time
	for _, p := range parts {
		if p.written.After(newest) {
			newest = p.written
		}
	}
	cut := newest.Add(-s.window)
	read := 0
	for _, p := range parts {
		if _, done := s.files[p.path]; done || p.written.Before(cut) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := ReadRows[eventIDRow](p.path)
		if IsCorrupt(err) {
			// Moved aside, so it is neither read again at every refresh nor
			// in any export; its ids are not remembered, and a redelivered
			// event of it is written again (into a readable file).
			if _, qerr := Quarantine(root, p.path, err, log); qerr != nil {
				log.Error("dedup: unreadable part file skipped; moving it aside failed", "path", p.path, "err", err, "move_err", qerr)
			}
			continue
		}
		if err != nil {
			log.Error("dedup: unreadable part file skipped", "path", p.path, "err", err)
			continue
		}
		for _, r := range rows {
			s.add(p.written, r.EventID)
		}
		s.files[p.path] = p.written
		read++
	}
	if read > 0 {
		log.Info("dedup: read event ids", "files", read, "ids", len(s.ids))
	}
	return nil
}

type partFile struct {
	path    string
	written time.Time
}

// listParts lists root/table=*/date=*/part-*.parquet.
func listParts(ctx context.Context, root, writerID string, log *slog.Logger) ([]partFile, error) {
	var parts []partFile
	tables, err := readDir(root)
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		if !t.IsDir() || !strings.HasPrefix(t.Name(), "table=") {
			continue
		}
		dates, err := readDir(filepath.Join(root, t.Name()))
		if err != nil {
			return nil, err
		}
		for _, d := range dates {
			if !d.IsDir() || !strings.HasPrefix(d.Name(), "date=") {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			dir := filepath.Join(root, t.Name(), d.Name())
			files, err := readDir(dir)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				name := f.Name()
				if strings.HasPrefix(name, ".part-"+writerID+"-") && strings.HasSuffix(name, ".tmp") {
					log.Warn("removing stale temp file", "path", filepath.Join(dir, name))
					_ = os.Remove(filepath.Join(dir, name))
					continue
				}
				if w, ok := partTime(name); ok && f.Type().IsRegular() {
					parts = append(parts, partFile{path: filepath.Join(dir, name), written: w})
				}
			}
		}
	}
	return parts, nil
}

func readDir(dir string) ([]os.DirEntry, error) {
	es, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("export.dedup: %w", err)
	}
	return es, nil
}
