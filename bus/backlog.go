package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EventsBacklog is the number of events the durable consumer has not acked
// yet: not delivered plus delivered and unacked. A consumer that does not
// exist yet has seen nothing, so its backlog is the whole stream. Shutdown
// waits for the Parquet sink's backlog to reach 0.
func (b *Bus) EventsBacklog(ctx context.Context, durable string) (uint64, error) {
	cons, err := b.js.Consumer(ctx, EventsStream, durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		info, serr := b.js.Stream(ctx, EventsStream)
		if serr != nil {
			return 0, fmt.Errorf("bus.EventsBacklog: %w", serr)
		}
		si, serr := info.Info(ctx)
		if serr != nil {
			return 0, fmt.Errorf("bus.EventsBacklog: %w", serr)
		}
		return si.State.Msgs, nil
	}
	if err != nil {
		return 0, fmt.Errorf("bus.EventsBacklog %s: %w", durable, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("bus.EventsBacklog %s: %w", durable, err)
	}
	return info.NumPending + uint64(info.NumAckPending), nil
}
