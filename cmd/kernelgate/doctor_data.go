package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/export"
)

// dataReport is what `doctor --data` found: the queue store and the
// Parquet log, checked offline (serve must be stopped: the store has one
// owner). No zygote starts: the data checks need no Python.
type dataReport struct {
	Dir        string            `json:"dir"`
	Stores     []bus.StoreReport `json:"stores"`
	StoreError string            `json:"store_error,omitempty"`
	Parquet    parquetReport     `json:"parquet"`
}

type parquetReport struct {
	Files       int      `json:"files"`
	Rows        int64    `json:"rows"`
	Corrupt     []string `json:"corrupt,omitempty"`     // not valid Parquet
	Quarantined []string `json:"quarantined,omitempty"` // moved aside by --fix
	Error       string   `json:"error,omitempty"`
}

// errDataProblems makes doctor exit non-zero when the data has problems.
var errDataProblems = errors.New("the data directory has problems (listed above)")

func (r dataReport) ok() bool {
	if r.StoreError != "" || r.Parquet.Error != "" || len(r.Parquet.Corrupt) > len(r.Parquet.Quarantined) {
		return false
	}
	for _, s := range r.Stores {
		if len(s.Problems) > 0 && !salvaged(s) {
			return false
		}
	}
	return true
}

// salvaged: --fix set the stream's damaged blocks aside and put back what
// they held; what was lost is in the counts, and nothing is left to fix.
func salvaged(s bus.StoreReport) bool {
	return s.Salvage != nil && !s.Salvage.DryRun && s.Salvage.Error == ""
}

// checkData verifies dir's store and Parquet files, changing nothing; fix
// salvages damaged streams as serve's start does (bus.Repair) and moves
// corrupt Parquet files aside (export.Quarantine), as serve's readers would.
func checkData(ctx context.Context, dir string, fix bool, log *slog.Logger) dataReport {
	rep := dataReport{Dir: dir}
	verify := bus.Verify
	if fix {
		verify = bus.Repair
	}
	stores, err := verify(ctx, dir, log)
	rep.Stores = stores
	if err != nil {
		rep.StoreError = err.Error()
	}
	root := filepath.Join(dir, "parquet")
	files, err := export.PartFiles(root)
	if err != nil {
		rep.Parquet.Error = err.Error()
		return rep
	}
	rep.Parquet.Files = len(files)
	for _, f := range files {
		n, err := export.VerifyFile(f)
		rep.Parquet.Rows += n
		if err == nil {
			continue
		}
		rel, _ := filepath.Rel(dir, f)
		if !export.IsCorrupt(err) {
			rep.Parquet.Error = err.Error()
			continue
		}
		rep.Parquet.Corrupt = append(rep.Parquet.Corrupt, rel+": "+err.Error())
		if fix {
			q, qerr := export.Quarantine(root, f, err, log)
			if qerr != nil {
				rep.Parquet.Error = qerr.Error()
				continue
			}
			qrel, _ := filepath.Rel(dir, q)
			rep.Parquet.Quarantined = append(rep.Parquet.Quarantined, qrel)
		}
	}
	return rep
}

func printData(w io.Writer, rep dataReport) {
	fmt.Fprintf(w, "data:     %s\n", rep.Dir)
	if rep.StoreError != "" {
		fmt.Fprintf(w, "store:    FAILED: %s\n", rep.StoreError)
	}
	for _, s := range rep.Stores {
		state := "ok"
		if len(s.Problems) > 0 {
			state = "DAMAGED"
		}
		name := s.Name
		if name == "" {
			name = "(store)"
		}
		fmt.Fprintf(w, "store %-14s %s, %d messages, %d bytes\n", name+":", state, s.Messages, s.Bytes)
		for _, p := range s.Problems {
			fmt.Fprintf(w, "    %s\n", p)
		}
		if s.Salvage != nil {
			printSalvage(w, *s.Salvage)
		}
	}
	p := rep.Parquet
	fmt.Fprintf(w, "parquet:  %d files, %d rows, %d corrupt\n", p.Files, p.Rows, len(p.Corrupt))
	for _, c := range p.Corrupt {
		fmt.Fprintf(w, "    %s\n", c)
	}
	for _, q := range p.Quarantined {
		fmt.Fprintf(w, "    moved aside: %s\n", q)
	}
	if len(p.Corrupt) > len(p.Quarantined) {
		fmt.Fprintln(w, "    fix: `kernelgate doctor --data DIR --fix` moves them aside (serve's readers do so too); restore them from a backup to get their rows back")
	}
	if p.Error != "" {
		fmt.Fprintf(w, "    error: %s\n", p.Error)
	}
}

// printSalvage says what a damaged stream's blocks held and what came back.
func printSalvage(w io.Writer, s bus.Salvage) {
	put := "put back"
	if s.DryRun {
		put = "would be put back by serve's start or --fix"
	}
	fmt.Fprintf(w, "    salvage: %d records readable in %d damaged block(s), %d lost (%d bytes unreadable), %d %s, %d skipped (the store holds newer, or they were deleted or expired)\n",
		s.Readable, s.Blocks, s.Lost, s.LostBytes, s.Recovered, put, s.Skipped)
	if s.Copy != "" {
		fmt.Fprintf(w, "    copy as it was: %s (delete it once the counts are checked)\n", s.Copy)
	}
	for _, u := range s.Unread {
		fmt.Fprintf(w, "    not read: %s\n", u)
	}
	if s.Error != "" {
		fmt.Fprintf(w, "    salvage failed: %s\n", s.Error)
	}
}
