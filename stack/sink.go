package stack

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

// Sink is the Parquet sink as a component: it writes the bus's log events
// under dir until stopped, and its Stop lets it write what was logged
// first (export.Sink.Flush, at most sinkFlushTimeout). Components that log
// (workers, searches) start after it, so they stop before.
func Sink(dir, writerID string, b func() *bus.Bus, log *slog.Logger) Component {
	var sink *export.Sink
	return Component{
		Name: "the Parquet sink",
		Start: func(context.Context) (err error) {
			sink, err = export.NewSink(dir, writerID, log)
			return err
		},
		Run: func(ctx context.Context) error { return sink.Run(ctx, b()) },
		Stop: func(context.Context) error {
			ctx, cancel := context.WithTimeout(context.Background(), sinkFlushTimeout)
			defer cancel()
			if left, err := sink.Flush(ctx, b()); err != nil {
				log.Warn("Parquet sink not flushed; the rest is written at the next start", "events_left", left, "err", err)
			}
			return nil
		},
	}
}
