package stack

import (
	"context"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/export"
)

// DefaultCompactEvery is how often serve compacts the days before today.
const DefaultCompactEvery = time.Hour

// compactLoop is serve's automatic policy: at start and every `every`, the
// days before today (UTC) are compacted, until ctx ends. A failure is logged
// and tried again next time: the log stays readable either way.
func compactLoop(ctx context.Context, root string, every time.Duration, log *slog.Logger) {
	if every <= 0 {
		return
	}
	for {
		t0 := time.Now()
		var parts, files, after int
		_, err := export.Compact(root, export.CompactOptions{Before: t0.UTC().Truncate(24 * time.Hour)},
			func(pc export.PartitionCompaction) {
				for _, q := range pc.Quarantined {
					log.Error("unreadable Parquet file moved aside; its rows are left out until it is repaired", "quarantined", q, "root", root)
				}
				if pc.FilesBefore > pc.FilesAfter {
					parts, files, after = parts+1, files+pc.FilesBefore, after+pc.FilesAfter
				}
			})
		switch {
		case err != nil:
			log.Error("compacting the Parquet log failed; trying again later", "err", err)
		case parts > 0:
			log.Info("compacted the Parquet log", "partitions", parts, "files_before", files, "files_after", after,
				"took", time.Since(t0).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}
