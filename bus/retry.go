package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// writeRetry bounds how long a write waits out a stream that does not
// answer: a cluster electing a stream leader (a node just lost) answers
// nothing for a few seconds.
const writeRetry = 15 * time.Second

// retry runs write until it succeeds, fails for another reason than an
// unanswered stream, writeRetry runs out or ctx ends. Only for writes that
// may run twice: a publish with a message id (deduplicated), a Put.
func (b *Bus) retry(ctx context.Context, where string, write func() error) error {
	return b.retryFor(ctx, where, writeRetry, unanswered, write)
}

// retryFor runs op until it succeeds, fails with an error retryable does not
// accept, limit runs out or ctx ends, waiting 0.1 s then twice as long (at
// most 1 s) between tries.
func (b *Bus) retryFor(ctx context.Context, where string, limit time.Duration, retryable func(error) bool, op func() error) error {
	deadline := time.Now().Add(limit)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := op()
		if err == nil || !retryable(err) || time.Now().Add(wait).After(deadline) || !sleepCtx(ctx, wait) {
			return err
		}
		b.log.Warn("not answered; retrying", "where", where, "err", err)
	}
}

// unanswered: the stream did not answer (no leader yet), as opposed to an
// answer that refuses the write.
func unanswered(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse)
}

// unsettled: a cluster that cannot answer a stream's or consumer's creation
// yet (no leader for its group, a node not yet known online, the request's
// own timeout while ctx lives), as opposed to an answer that refuses it.
func unsettled(ctx context.Context) func(error) bool {
	return func(err error) bool {
		var apiErr *jetstream.APIError
		noPeers := errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrNoPeers
		return unanswered(err) || noPeers || errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
	}
}
