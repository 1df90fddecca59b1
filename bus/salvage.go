package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Salvage is what was read back from one damaged stream and put back.
type Salvage struct {
	Stream    string   `json:"stream"`
	Copy      string   `json:"copy,omitempty"` // its directory as it was before the server opened it
	Blocks    int      `json:"damaged_blocks"`
	Readable  int      `json:"readable"`   // messages read from its damaged blocks
	Lost      int      `json:"lost"`       // messages that could not be read (from the gaps in their sequences)
	LostBytes int64    `json:"lost_bytes"` // bytes skipped to reach the next readable record
	Recovered int      `json:"recovered"`  // put back
	Skipped   int      `json:"skipped"`    // dropped by the server but not put back: the store holds newer, or it was deleted or expired
	Unread    []string `json:"unread,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"` // counted on a copy: nothing was put back
	Error     string   `json:"error,omitempty"`
	ElapsedS  float64  `json:"elapsed_s"`
}

// aside is what Open found damaged before the server opened the store.
type aside struct {
	root    string // where the copies are
	streams []streamScan
}

// setAside reads the store's blocks before the server does (it cuts a
// damaged block short at its first bad record, and what follows is gone)
// and copies each damaged stream aside. The copy is for the operator: the
// records to put back are already read.
func setAside(storeDir string, damage *damageLog, log *slog.Logger) *aside {
	t0 := time.Now()
	streams, err := scanStore(storeDir)
	if err != nil {
		log.Error("reading the queue store's blocks before opening it failed; damaged records will not be salvaged", "err", err)
	}
	if len(streams) == 0 {
		log.Debug("store blocks read", "elapsed", time.Since(t0))
		return nil
	}
	root, err := copyAside(storeDir, streams, time.Now())
	if err != nil {
		log.Error("copying damaged streams aside failed; salvaging from what was read", "err", err)
	}
	for _, s := range streams {
		log.Error("the queue store has damaged blocks; copied aside before opening it", "store", s.Name,
			"copy", filepath.Join(root, s.Name), "blocks", len(s.Blocks))
		forgetState(s, log)
		damage.noteBlocks(s, "copied to "+filepath.Join(root, s.Name))
	}
	return &aside{root: root, streams: streams}
}

// forgetState removes a damaged stream's saved state (msgs/index.db), so
// that the server rebuilds it from the blocks at start and cuts them there.
// Trusting it, the server meets the damage only on a later read and then
// counts the sequences past it deleted, the records put back included.
func forgetState(s streamScan, log *slog.Logger) {
	if err := os.Remove(filepath.Join(s.Dir, "msgs", "index.db")); err != nil && !os.IsNotExist(err) {
		log.Warn("removing a damaged stream's saved state failed", "store", s.Name, "err", err)
	}
}

// salvageAside puts back what the server dropped from each damaged stream.
func (b *Bus) salvageAside(ctx context.Context) {
	if b.aside == nil {
		return
	}
	for _, s := range b.aside.streams {
		rep := restore(ctx, b.js, s)
		rep.Copy = filepath.Join(b.aside.root, s.Name)
		logSalvage(b.log, rep)
		b.salvaged = append(b.salvaged, rep)
	}
	b.aside = nil // its records are no longer needed
}

// Salvage lists what Open put back into damaged streams (none when the
// store was sound).
func (b *Bus) Salvage() []Salvage {
	return append([]Salvage(nil), b.salvaged...)
}

func logSalvage(log *slog.Logger, r Salvage) {
	attrs := []any{"store", r.Stream, "copy", r.Copy, "readable", r.Readable, "lost", r.Lost,
		"lost_bytes", r.LostBytes, "recovered", r.Recovered, "skipped", r.Skipped, "elapsed_s", r.ElapsedS}
	if len(r.Unread) > 0 {
		attrs = append(attrs, "unread", strings.Join(r.Unread, "; "))
	}
	if r.Error != "" {
		log.Error("salvaging a damaged stream failed", append(attrs, "err", r.Error)...)
		return
	}
	log.Warn("salvaged a damaged stream", attrs...)
}

// restore puts back the readable records of s that the server dropped.
// Only records at or past a block's first bad one are candidates: those
// before it the server kept, and if the stream no longer has one it was
// deleted on purpose.
func restore(ctx context.Context, js jetstream.JetStream, s streamScan) Salvage {
	t0 := time.Now()
	rep := putBack(ctx, js, s)
	rep.ElapsedS = (s.Elapsed + time.Since(t0)).Seconds()
	return rep
}

func putBack(ctx context.Context, js jetstream.JetStream, s streamScan) Salvage {
	rep := Salvage{Stream: s.Name, Blocks: len(s.Blocks)}
	var cands []blockRecord
	for _, bl := range s.Blocks {
		if bl.Unread != "" {
			rep.Unread = append(rep.Unread, fmt.Sprintf("%d.blk: %s", bl.Index, bl.Unread))
		}
		for _, run := range bl.Bad {
			rep.Lost += run.Records
		}
		rep.LostBytes += int64(bl.badBytes())
		for _, r := range bl.Records {
			if r.Tombstone || r.Erased || r.Subject == "" {
				continue
			}
			rep.Readable++
			if bl.FirstBad >= 0 && r.Offset > bl.FirstBad {
				cands = append(cands, r)
			}
		}
	}
	if s.Encrypted {
		rep.Unread = append(rep.Unread, "encrypted blocks: not read")
	}
	st, err := js.Stream(ctx, s.Name)
	if err != nil {
		rep.Error = fmt.Sprintf("opening the stream: %v", err)
		return rep
	}
	var plan []blockRecord
	if strings.HasPrefix(s.Name, "KV_") {
		plan, err = planBucket(ctx, st, cands, time.Now())
	} else {
		plan, err = planStream(ctx, st, cands, s.Tombstones, time.Now())
	}
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Skipped = len(cands) - len(plan)
	for _, r := range plan {
		msg := &nats.Msg{Subject: r.Subject, Data: r.Data, Header: parseHeader(r.Header)}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			rep.Error = fmt.Sprintf("putting back %s (sequence %d): %v", r.Subject, r.Seq, err)
			return rep
		}
		rep.Recovered++
	}
	return rep
}

// planBucket picks, of a bucket's candidates, each key's latest record
// that the bucket holds nothing as new as: a value, or a delete or purge
// marker over an older value.
func planBucket(ctx context.Context, st jetstream.Stream, cands []blockRecord, now time.Time) ([]blockRecord, error) {
	maxAge := st.CachedInfo().Config.MaxAge
	latest := map[string]blockRecord{}
	for _, r := range cands {
		if old, ok := latest[r.Subject]; !ok || r.Seq > old.Seq {
			latest[r.Subject] = r
		}
	}
	var plan []blockRecord
	for subj, r := range latest {
		if maxAge > 0 && now.Sub(time.Unix(0, r.TS)) > maxAge {
			continue
		}
		held, err := st.GetLastMsgForSubject(ctx, subj)
		switch {
		case err == nil && held.Sequence >= r.Seq:
			continue
		case errors.Is(err, jetstream.ErrMsgNotFound) && isMarker(r.Header):
			continue // nothing left to delete
		case err != nil && !errors.Is(err, jetstream.ErrMsgNotFound):
			return nil, fmt.Errorf("reading %s: %w", subj, err)
		}
		plan = append(plan, r)
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].Seq < plan[j].Seq })
	return plan, nil
}

// planStream picks the candidates a stream no longer holds and did not
// delete: no tombstone, not past its age limit, not acked by its consumers
// (a work queue or interest stream drops what they acked).
func planStream(ctx context.Context, st jetstream.Stream, cands []blockRecord, tomb map[uint64]struct{}, now time.Time) ([]blockRecord, error) {
	cfg := st.CachedInfo().Config
	acked, err := ackedBy(ctx, st, cfg.Retention)
	if err != nil {
		return nil, err
	}
	var plan []blockRecord
	for _, r := range cands {
		if _, gone := tomb[r.Seq]; gone || acked(r.Subject, r.Seq) {
			continue
		}
		if cfg.MaxAge > 0 && now.Sub(time.Unix(0, r.TS)) > cfg.MaxAge {
			continue
		}
		_, err := st.GetMsg(ctx, r.Seq)
		if err == nil {
			continue
		}
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, fmt.Errorf("reading sequence %d: %w", r.Seq, err)
		}
		plan = append(plan, r)
	}
	return plan, nil
}

// isMarker reports a KV delete or purge marker.
func isMarker(raw []byte) bool {
	op := parseHeader(raw).Get("KV-Operation")
	return op == "DEL" || op == "PURGE"
}

// parseHeader reads a stored NATS header block ("NATS/1.0\r\nKey: value\r\n...").
// Expectations are left out: they held when the message was first stored.
func parseHeader(raw []byte) nats.Header {
	if len(raw) == 0 {
		return nil
	}
	h := nats.Header{}
	lines := strings.Split(string(raw), "\r\n")
	for _, line := range lines[1:] {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.HasPrefix(strings.ToLower(k), "nats-expected") {
			continue
		}
		h[k] = append(h[k], strings.TrimSpace(v))
	}
	if len(h) == 0 {
		return nil
	}
	return h
}
