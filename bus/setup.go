package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SinkDurable is the Parquet sink's consumer on EVENTS (export.Durable).
// Open creates it: EVENTS keeps an event until this consumer has acked it
// (interest retention), so it must exist before the first event, whichever
// process publishes first.
const SinkDurable = "parquet-sink"

// setup creates or updates the streams and the buckets. Update keeps stored
// messages, so a changed bound or TTL applies on the next Open.
func (b *Bus) setup(ctx context.Context) error {
	if st, ok, err := b.joined(ctx, JobsStream); err != nil || ok {
		if err != nil {
			return err
		}
		b.jobs = st
		return b.setupRest(ctx)
	}
	jobs, err := b.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:      JobsStream,
		Subjects:  []string{"jobs.>"},
		Retention: jetstream.WorkQueuePolicy, // a job is deleted once acked
		Storage:   jetstream.FileStorage,
		MaxMsgs:   b.opts.MaxQueuedJobs,
		MaxBytes:  b.limits.Jobs,
		// DiscardNew: a full queue refuses the new job (the gateway answers
		// 429) instead of silently dropping the oldest accepted one. No age
		// limit: an accepted job leaves the queue answered, never aged out.
		Discard:    jetstream.DiscardNew,
		Duplicates: b.opts.DedupWindow,
		Replicas:   b.replicas,
	})
	if err != nil {
		return fmt.Errorf("bus.setup: stream %s: %w", JobsStream, storeHint(err))
	}
	b.jobs = jobs
	return b.setupRest(ctx)
}

// joined returns stream name as it is when Options.Join keeps what exists.
func (b *Bus) joined(ctx context.Context, name string) (jetstream.Stream, bool, error) {
	if !b.opts.Join {
		return nil, false, nil
	}
	st, err := b.js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("bus.setup: stream %s: %w", name, err)
	}
	return st, true, nil
}

// setupRest is setup after JOBS.
func (b *Bus) setupRest(ctx context.Context) error {
	var err error
	if _, ok, jerr := b.joined(ctx, EventsStream); jerr != nil {
		return jerr
	} else if !ok {
		if err := b.setupEvents(ctx); err != nil {
			return err
		}
	}
	if b.kv, err = b.keyValue(ctx, CacheBucket, "kernelgate result cache: sha256(task, code, options) -> verdict JSON", b.opts.CacheTTL, b.limits.Cache); err != nil {
		return err
	}
	// A full cache forgets its oldest verdicts (a rerun, not lost data)
	// rather than refusing new ones.
	if err := b.discardOld(ctx, "KV_"+CacheBucket); err != nil {
		return err
	}
	if b.batches, err = b.keyValue(ctx, BatchBucket, "kernelgate batches: <batch> -> record, <batch>.<index> -> result", b.opts.ResultTTL, b.limits.Results); err != nil {
		return err
	}
	// Its entries lead to results, so they live as long as results do.
	b.inflight, err = b.Bucket(ctx, InflightBucket, "kernelgate evaluations in flight: <work key> -> the job evaluating it, <work key>.<job id> -> a job waiting for its verdict", b.opts.ResultTTL)
	if err != nil {
		return err
	}
	b.requests, err = b.Bucket(ctx, RequestBucket, "kernelgate idempotency keys: sha256(client, endpoint, key) -> the batch the first request made", b.opts.ResultTTL)
	if err != nil {
		return err
	}
	kv, err := b.keyValue(ctx, WorkersBucket, "kernelgate workers: worker id -> its announcement, refreshed while it runs", WorkerTTL, workersBytes)
	b.workers = &Bucket{kv: kv, bus: b}
	if err != nil {
		return err
	}
	// Before Open returns, so that no new write lands between the server's
	// cut and the records put back.
	b.salvageAside(ctx)
	return nil
}

// setupEvents creates EVENTS with interest retention: an event stays until
// the sink has acked it (written it to Parquet) and no longer. A full
// EVENTS refuses new events (DiscardNew): the worker that logs one keeps
// its job and retries, and the gateway refuses new work (storage.go), so an
// event the sink has not written is never the one dropped. DiscardOld would
// drop exactly those, the oldest unwritten.
//
// Switching a stream to interest retention drops what no consumer is
// interested in, so the stream exists (limits retention) and the sink's
// consumer is there before the switch; a store from before this change
// keeps every event it holds.
func (b *Bus) setupEvents(ctx context.Context) error {
	cfg := jetstream.StreamConfig{
		Name:       EventsStream,
		Subjects:   []string{"events.>"},
		Retention:  jetstream.InterestPolicy,
		Storage:    jetstream.FileStorage,
		MaxBytes:   b.limits.Events,
		MaxAge:     b.opts.EventMaxAge,
		Discard:    jetstream.DiscardNew,
		Duplicates: b.opts.DedupWindow, // a retried publish with the same id is stored once
		Replicas:   b.replicas,
	}
	if b.opts.EventMaxAge > 0 {
		b.log.Warn("EVENTS drops events the Parquet sink has not written once they are older than the event max age",
			"max_age", b.opts.EventMaxAge)
	}
	_, err := b.js.Stream(ctx, EventsStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		first := cfg
		first.Retention = jetstream.LimitsPolicy
		_, err = b.js.CreateStream(ctx, first)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			err = nil // another process made it meanwhile
		}
	}
	if err != nil {
		return fmt.Errorf("bus.setup: stream %s: %w", EventsStream, storeHint(err))
	}
	if _, err := b.js.Consumer(ctx, EventsStream, SinkDurable); errors.Is(err, jetstream.ErrConsumerNotFound) {
		_, err = b.js.CreateConsumer(ctx, EventsStream, b.eventsConsumer(SinkDurable, 0))
		if err != nil && !errors.Is(err, jetstream.ErrConsumerExists) {
			return fmt.Errorf("bus.setup: the sink's consumer on %s: %w", EventsStream, err)
		}
	} else if err != nil {
		return fmt.Errorf("bus.setup: the sink's consumer on %s: %w", EventsStream, err)
	}
	if _, err := b.js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("bus.setup: stream %s: %w", EventsStream, storeHint(err))
	}
	return nil
}

// eventsConsumer is the config of a durable event reader taking batches of
// up to batch (Events); 0: the sink's default.
func (b *Bus) eventsConsumer(durable string, batch int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:    durable,
		AckPolicy:  jetstream.AckExplicitPolicy,
		AckWait:    b.opts.EventAckWait,
		MaxDeliver: -1,
		// The server's default (1000) would cap a larger batch.
		MaxAckPending: max(1000, 2*batch),
	}
}

// keyValue creates or updates a bucket of at most maxBytes.
func (b *Bus) keyValue(ctx context.Context, name, description string, ttl time.Duration, maxBytes int64) (jetstream.KeyValue, error) {
	if b.opts.Join {
		kv, err := b.js.KeyValue(ctx, name)
		if err == nil {
			return kv, nil
		}
		if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, fmt.Errorf("bus.setup: bucket %s: %w", name, err)
		}
	}
	kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      name,
		Description: description,
		TTL:         ttl,
		History:     1,
		MaxBytes:    maxBytes,
		Storage:     jetstream.FileStorage,
		Replicas:    b.replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("bus.setup: bucket %s: %w", name, storeHint(err))
	}
	return kv, nil
}

// discardOld makes a full stream drop its oldest messages.
func (b *Bus) discardOld(ctx context.Context, name string) error {
	st, err := b.js.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("bus.setup: stream %s: %w", name, err)
	}
	cfg := st.CachedInfo().Config
	if cfg.Discard == jetstream.DiscardOld {
		return nil
	}
	cfg.Discard = jetstream.DiscardOld
	if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("bus.setup: stream %s: %w", name, err)
	}
	return nil
}

// storeHint adds what to do to a stream or bucket the server cannot reserve
// its byte limit for.
func storeHint(err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrStorageExceeded {
		return fmt.Errorf("%w (the streams' and buckets' byte limits add up to more than the NATS store may hold: "+
			"lower --store-max-bytes or the per-store limits, or give the store more disk)", err)
	}
	return err
}
