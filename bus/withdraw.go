package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A batch is queued whole or not at all: when a later item of a batch is
// refused (the queue full, the store full), the gateway takes back the jobs
// it already queued for it, so a refused batch leaves no work behind that
// no one will read.

// QueueJob is PublishJob that also returns where the stream stored the job,
// for WithdrawJob.
func (b *Bus) QueueJob(ctx context.Context, subject, id string, data []byte) (uint64, error) {
	if !strings.HasPrefix(subject, "jobs.") {
		return 0, fmt.Errorf("bus.QueueJob: subject %q is not under jobs.", subject)
	}
	if id == "" {
		return 0, errors.New("bus.QueueJob: empty id")
	}
	var seq uint64
	err := b.retry(ctx, "bus.QueueJob", func() error {
		ack, err := b.js.Publish(ctx, subject, data, jetstream.WithMsgID(id))
		if err == nil {
			seq = ack.Sequence
		}
		return err
	})
	if isFull(err) {
		return 0, ErrQueueFull
	}
	if err != nil {
		return 0, b.noteWrite(fmt.Errorf("bus.QueueJob %s: %w", id, err))
	}
	b.wake(subject)
	return seq, nil
}

// WithdrawJob removes the job QueueJob stored at seq. One already gone
// (answered) is no error. A worker that holds it may still run it: its
// answer then lands under a batch no one reads, and expires with it.
func (b *Bus) WithdrawJob(ctx context.Context, seq uint64) error {
	err := b.jobs.DeleteMsg(ctx, seq)
	if err == nil || errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeMessageNotFound {
		return nil
	}
	return fmt.Errorf("bus.WithdrawJob %d: %w", seq, err)
}
