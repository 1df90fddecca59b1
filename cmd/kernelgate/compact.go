package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kernelgate/kernelgate/export"
)

func newCompactCmd(g *globals) *cobra.Command {
	var (
		dataDir, before string
		all             bool
		tables          []string
	)
	cmd := &cobra.Command{
		Use:   "compact [--data DIR] [--before YYYY-MM-DD | --all] [--table NAME]",
		Short: "Rewrite each day of the Parquet log into one file (rows unchanged), for data loaders",
		Long: "The server writes one small file per table, day and batch. compact rewrites each partition\n" +
			"(table=<t>/date=<d> under --data/parquet) that holds more than one into one zstd file with\n" +
			"row groups of up to 131072 rows, keeping every row and its order; the files it replaces are\n" +
			"removed after the new one is in place. By default only days before today (UTC): those no\n" +
			"longer grow. A running server is safe (it writes new files; it never edits one).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := export.CompactOptions{Tables: tables}
			switch {
			case all && before != "":
				return usageError{errors.New("--all and --before exclude each other")}
			case before != "":
				t, err := time.Parse(time.DateOnly, before)
				if err != nil {
					return usageError{fmt.Errorf("--before %q: want YYYY-MM-DD", before)}
				}
				opts.Before = t
			case !all:
				opts.Before = time.Now().UTC().Truncate(24 * time.Hour)
			}
			root := filepath.Join(dataDir, "parquet")
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				return usageError{fmt.Errorf("%s: no Parquet log here (is --data the directory serve was given?)", root)}
			}
			var files, after, rows, bytesBefore, bytesAfter int64
			done, err := export.Compact(root, opts, func(pc export.PartitionCompaction) {
				files, after, rows = files+int64(pc.FilesBefore), after+int64(pc.FilesAfter), rows+pc.Rows
				bytesBefore, bytesAfter = bytesBefore+pc.BytesBefore, bytesAfter+pc.BytesAfter
				line := fmt.Sprintf("%s: %d files -> %d, %d rows, %s -> %s", pc.Dir, pc.FilesBefore, pc.FilesAfter,
					pc.Rows, kib(pc.BytesBefore), kib(pc.BytesAfter))
				if len(pc.SkippedFiles) > 0 {
					line += fmt.Sprintf(" (%d of another schema kept as they are)", len(pc.SkippedFiles))
				}
				for _, q := range pc.Quarantined {
					line += fmt.Sprintf("; not valid Parquet, moved aside: %s", q)
				}
				fmt.Fprintln(g.stderr, line)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s: %d partitions, %d files -> %d, %d rows, %s -> %s\n", root, len(done), files, after,
				rows, kib(bytesBefore), kib(bytesAfter))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataDir, "data", "./data", "the gateway's data directory (the one given to serve)")
	fl.StringVar(&before, "before", "", "compact days before this one (default: today, UTC)")
	fl.BoolVar(&all, "all", false, "compact every day, today's too")
	fl.StringSliceVar(&tables, "table", nil, "only these tables (evaluations, search_steps, ...; repeatable)")
	return cmd
}

func kib(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }
