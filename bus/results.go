package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The batches bucket holds, for ResultTTL, what a client may ask for after
// its request is gone: under <batch> the batch record (written when the
// batch is accepted), under <batch>.<index> each item's result (written by
// the worker before it notifies and acks). Values are the caller's bytes.

// ValidID reports whether id can name a batch: 1 to 64 letters, digits, _
// or -. It is one KV key token, so <id>.* matches only its results.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// resultKey is the key of one result: the index zero-padded so keys sort.
func resultKey(batch string, index int) string { return fmt.Sprintf("%s.%05d", batch, index) }

func checkID(where, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%s: invalid batch id %q", where, id)
	}
	return nil
}

// PutBatch stores a batch's record under id.
func (b *Bus) PutBatch(ctx context.Context, id string, record []byte) error {
	if err := checkID("bus.PutBatch", id); err != nil {
		return err
	}
	if err := b.noteWrite(b.retry(ctx, "bus.PutBatch", func() error { _, err := b.batches.Put(ctx, id, record); return err })); err != nil {
		return fmt.Errorf("bus.PutBatch %s: %w", id, err)
	}
	return nil
}

// Batch returns the record stored under id, or ok false when there is none
// (never stored, or expired).
func (b *Bus) Batch(parent context.Context, id string) ([]byte, bool, error) {
	if !ValidID(id) {
		return nil, false, nil
	}
	ctx, cancel := readCtx(parent)
	defer cancel()
	e, err := b.batches.Get(ctx, id)
	err = readErr(parent, ctx, err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("bus.Batch %s: %w", id, err)
	}
	return e.Value(), true, nil
}

// PutResult stores the result of item index of batch. The first result
// stored wins: a redelivered job that is evaluated again gets the stored
// bytes back, so every reader sees one answer per item. It returns the bytes
// now stored.
func (b *Bus) PutResult(ctx context.Context, batch string, index int, data []byte) ([]byte, error) {
	if err := checkID("bus.PutResult", batch); err != nil {
		return nil, err
	}
	if index < 0 {
		return nil, fmt.Errorf("bus.PutResult %s: negative index %d", batch, index)
	}
	key := resultKey(batch, index)
	_, err := b.batches.Create(ctx, key, data)
	b.noteWrite(err)
	if err == nil {
		return data, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("bus.PutResult %s: %w", key, err)
	}
	e, err := b.batches.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("bus.PutResult %s: reading the stored result: %w", key, err)
	}
	return e.Value(), nil
}

// Result returns the result of item index of batch and when it was stored
// (the server's clock), or ok false when none is stored.
func (b *Bus) Result(ctx context.Context, batch string, index int) ([]byte, time.Time, bool, error) {
	if err := checkID("bus.Result", batch); err != nil {
		return nil, time.Time{}, false, err
	}
	rctx, cancel := readCtx(ctx)
	defer cancel()
	e, err := b.batches.Get(rctx, resultKey(batch, index))
	err = readErr(ctx, rctx, err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("bus.Result %s: %w", resultKey(batch, index), err)
	}
	return e.Value(), e.Created(), true, nil
}

// DeleteResult removes the result of item index of batch, for a repair by
// hand; deleting one that is not stored is no error.
func (b *Bus) DeleteResult(ctx context.Context, batch string, index int) error {
	if err := checkID("bus.DeleteResult", batch); err != nil {
		return err
	}
	if err := b.batches.Delete(ctx, resultKey(batch, index)); err != nil {
		return fmt.Errorf("bus.DeleteResult %s: %w", resultKey(batch, index), err)
	}
	return nil
}

// BatchIDs lists the ids of the batch records stored (their results'
// keys, <id>.<index>, are left out).
func (b *Bus) BatchIDs(parent context.Context) ([]string, error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	keys, err := b.batches.ListKeysFiltered(ctx, "*")
	if err != nil {
		return nil, fmt.Errorf("bus.BatchIDs: %w", err)
	}
	var out []string
	for {
		select {
		case k, ok := <-keys.Keys():
			if !ok {
				return out, nil
			}
			out = append(out, k)
		case <-ctx.Done():
			_ = keys.Stop()
			return nil, fmt.Errorf("bus.BatchIDs: %w", readErr(parent, ctx, ctx.Err()))
		}
	}
}

// Results returns every result stored for batch, by index, read in one pass.
func (b *Bus) Results(ctx context.Context, batch string) (map[int][]byte, error) {
	if err := checkID("bus.Results", batch); err != nil {
		return nil, err
	}
	es, err := entries(ctx, b.batches, batch+".*")
	if err != nil {
		return nil, fmt.Errorf("bus.Results %s: %w", batch, err)
	}
	out := map[int][]byte{}
	for _, e := range es {
		i, err := strconv.Atoi(strings.TrimPrefix(e.Key(), batch+"."))
		if err != nil || i < 0 {
			b.log.Warn("result under a malformed key; skipped", "key", e.Key())
			continue
		}
		out[i] = e.Value()
	}
	return out, nil
}
