package bus

import (
	"context"
	"fmt"
	"strings"
)

// Observe receives every notification whose subject matches pattern (NATS
// wildcards allowed, as in "results.>") as a member of the queue group
// queue: of all the processes observing with the same queue, one receives
// each message, so counters summed over several gateways count it once.
// It is for observers such as metrics; a waiter for one subject uses
// Subscribe, and receives its messages whatever observers there are.
// Like every notification, a message published while no observer listens
// is missed. The caller must Unsubscribe.
func (b *Bus) Observe(ctx context.Context, pattern, queue string) (*Subscription, error) {
	switch {
	case pattern == "" || strings.ContainsAny(pattern, " \t\r\n"):
		return nil, fmt.Errorf("bus.Observe: invalid subject %q", pattern)
	case strings.HasPrefix(pattern, "jobs.") || strings.HasPrefix(pattern, "events.") || pattern == ">":
		return nil, fmt.Errorf("bus.Observe: subject %q covers a stream", pattern)
	case queue == "" || strings.ContainsAny(queue, " \t\r\n*>."):
		return nil, fmt.Errorf("bus.Observe: invalid queue group %q", queue)
	}
	sub, err := b.nc.QueueSubscribeSync(pattern, queue)
	if err != nil {
		return nil, fmt.Errorf("bus.Observe %s: %w", pattern, err)
	}
	if err := sub.SetPendingLimits(-1, 64<<20); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus.Observe %s: %w", pattern, err)
	}
	if err := b.flush(ctx); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus.Observe %s: flush: %w", pattern, err)
	}
	return &Subscription{sub: sub}, nil
}
