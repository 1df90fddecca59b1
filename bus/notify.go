package bus

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// Notifications are core NATS messages (no stream, no persistence): a waiter
// that is gone misses them. Use them only where the durable record lives
// elsewhere (a verdict's event on EVENTS) and losing one costs a wait, not data.

// Notify publishes data on subject (not under jobs. or events., which belong
// to the streams, nor wake., the job queue's) and returns once the server
// has received it.
func (b *Bus) Notify(ctx context.Context, subject string, data []byte) error {
	if err := checkNotifySubject(subject); err != nil {
		return fmt.Errorf("bus.Notify: %w", err)
	}
	if err := b.nc.Publish(subject, data); err != nil {
		return fmt.Errorf("bus.Notify %s: %w", subject, err)
	}
	if err := b.flush(ctx); err != nil {
		return fmt.Errorf("bus.Notify %s: flush: %w", subject, err)
	}
	return nil
}

// Subscription receives the notifications of one subject, in order.
type Subscription struct {
	sub *nats.Subscription
}

// Subscribe starts receiving notifications on subject. When it returns, the
// server knows of the subscription: a Notify issued after it is delivered.
// The caller must Unsubscribe.
func (b *Bus) Subscribe(ctx context.Context, subject string) (*Subscription, error) {
	if err := checkNotifySubject(subject); err != nil {
		return nil, fmt.Errorf("bus.Subscribe: %w", err)
	}
	sub, err := b.nc.SubscribeSync(subject)
	if err != nil {
		return nil, fmt.Errorf("bus.Subscribe %s: %w", subject, err)
	}
	// A large batch of results must not be dropped as a slow consumer.
	if err := sub.SetPendingLimits(-1, 1<<30); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus.Subscribe %s: %w", subject, err)
	}
	if err := b.flush(ctx); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus.Subscribe %s: flush: %w", subject, err)
	}
	return &Subscription{sub: sub}, nil
}

// Next waits for the next notification; it returns ctx's error when ctx ends first.
func (s *Subscription) Next(ctx context.Context) ([]byte, error) {
	m, err := s.sub.NextMsgWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("bus.Subscription.Next: %w", err)
	}
	return m.Data, nil
}

// Unsubscribe stops the subscription. Safe to call more than once.
func (s *Subscription) Unsubscribe() {
	_ = s.sub.Unsubscribe()
}

func checkNotifySubject(subject string) error {
	switch {
	case subject == "" || strings.ContainsAny(subject, " \t\r\n*>"):
		return fmt.Errorf("invalid subject %q", subject)
	case strings.HasPrefix(subject, "jobs.") || strings.HasPrefix(subject, "events."):
		return fmt.Errorf("subject %q belongs to a stream", subject)
	case strings.HasPrefix(subject, wakePrefix):
		return fmt.Errorf("subject %q belongs to the job queue's wake-ups", subject)
	}
	return nil
}

// flush waits for the server's pong; nats.go requires a deadline for it.
func (b *Bus) flush(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.opts.ReadyTimeout)
		defer cancel()
	}
	return b.nc.FlushWithContext(ctx)
}
