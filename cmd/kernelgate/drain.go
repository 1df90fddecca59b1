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

// waitSinkFlushed returns once the sink has acked every event logged so
// far, has stopped (sinkDone closed: it failed), or after timeout.
func waitSinkFlushed(b *bus.Bus, sinkDone <-chan struct{}, log *slog.Logger, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := b.EventsBacklog(ctx, export.Durable)
		if err == nil && n == 0 {
			return
		}
		select {
		case <-sinkDone:
			return
		case <-ctx.Done():
			log.Warn("Parquet sink not flushed before the timeout; the rest is written at the next start",
				"events_left", n, "err", err, "timeout", timeout)
			return
		case <-tick.C:
		}
	}
}
