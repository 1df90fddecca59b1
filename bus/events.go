package bus

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Event is one delivery of a logged event.
type Event struct {
	ID           string // the Nats-Msg-Id given to PublishEvent
	Subject      string
	Data         []byte
	NumDelivered uint64
}

// PublishEvent appends data to EVENTS on subject (under events.) with id as
// its dedup id: a retried publish with the same id within the dedup window
// is stored once. It returns once the server has stored the event.
func (b *Bus) PublishEvent(ctx context.Context, subject, id string, data []byte) error {
	return b.noteWrite(b.publish(ctx, "bus.PublishEvent", "events.", subject, id, data))
}

// publish stores data on a stream subject under prefix, deduplicated by id;
// where names the caller in errors.
func (b *Bus) publish(ctx context.Context, where, prefix, subject, id string, data []byte) error {
	if !strings.HasPrefix(subject, prefix) {
		return fmt.Errorf("%s: subject %q is not under %s", where, subject, prefix)
	}
	if id == "" {
		return fmt.Errorf("%s: empty id", where)
	}
	err := b.retry(ctx, where, func() error {
		_, err := b.js.Publish(ctx, subject, data, jetstream.WithMsgID(id))
		return err
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", where, id, err)
	}
	return nil
}

// Events pulls events through the durable consumer in batches of up to
// batch, waiting at most maxWait to fill one, and calls handle with each
// non-empty batch. The batch is acked only after handle returns nil (the sink
// has written and renamed its file); on an error it is redelivered after
// NakDelay. Events are never dropped for failing: there is no MaxDeliver.
// While handle runs the batch is kept alive every EventAckWait/2.
//
// Events returns nil when ctx is cancelled, once its open fetch has run out
// (at most maxWait, see pull).
func (b *Bus) Events(ctx context.Context, durable string, batch int, maxWait time.Duration, handle func(ctx context.Context, evs []Event) error) error {
	if batch < 1 || maxWait <= 0 {
		return fmt.Errorf("bus.Events %s: batch (%d) and maxWait (%s) must be positive", durable, batch, maxWait)
	}
	if maxWait > b.opts.EventAckWait/2 {
		// The first event of a batch waits up to maxWait before handle
		// starts keeping it alive; it must not expire meanwhile.
		return fmt.Errorf("bus.Events %s: maxWait %s must be at most EventAckWait/2 (%s)", durable, maxWait, b.opts.EventAckWait/2)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, EventsStream, b.eventsConsumer(durable, batch))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("bus.Events %s: consumer: %w", durable, err)
	}
	log := b.log.With("durable", durable)
	for ctx.Err() == nil {
		var msgs []jetstream.Msg
		_, err := pull(ctx, cons, batch, maxWait, func(m jetstream.Msg) { msgs = append(msgs, m) })
		if err != nil {
			if b.isClosed() {
				return fmt.Errorf("bus.Events %s: %w", durable, errClosed)
			}
			log.Warn("fetch failed; retrying", "err", err)
		}
		if len(msgs) == 0 {
			if err != nil && !sleepCtx(ctx, b.opts.NakDelay) {
				return nil
			}
			continue
		}
		b.deliverEvents(ctx, log, msgs, handle)
	}
	return nil
}

func (b *Bus) deliverEvents(ctx context.Context, log *slog.Logger, msgs []jetstream.Msg, handle func(context.Context, []Event) error) {
	evs := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		ev := Event{ID: m.Headers().Get(jetstream.MsgIDHeader), Subject: m.Subject(), Data: m.Data()}
		if md, err := m.Metadata(); err == nil {
			ev.NumDelivered = md.NumDelivered
		}
		evs = append(evs, ev)
	}
	herr := runKeptAlive(ctx, b.opts.EventAckWait/2, msgs, func(hctx context.Context) error {
		return handle(hctx, evs)
	})
	if herr != nil && ctx.Err() == nil {
		log.Warn("event batch failed; will be redelivered", "events", len(evs), "err", herr)
	}
	for _, m := range msgs {
		var aerr error
		switch {
		case herr == nil:
			aerr = m.Ack()
		case ctx.Err() != nil:
			aerr = m.Nak() // shutting down: hand back now
		default:
			aerr = m.NakWithDelay(b.opts.NakDelay)
		}
		if aerr != nil {
			log.Warn("ack failed; event will be redelivered after AckWait", "err", aerr)
			return
		}
	}
}
