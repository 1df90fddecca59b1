package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/export"
)

// sinkFlushTimeout bounds how long shutdown waits for the Parquet sink to
// write what the workers logged; what is left stays in the EVENTS stream
// and is written at the next start.
const sinkFlushTimeout = 15 * time.Second

// flushSink lets the sink write what was logged (export.Sink.Flush), for
// at most timeout.
func flushSink(sink *export.Sink, b *bus.Bus, log *slog.Logger, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if left, err := sink.Flush(ctx, b); err != nil {
		log.Warn("Parquet sink not flushed; the rest is written at the next start", "events_left", left, "err", err)
	}
}
