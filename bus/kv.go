package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Errors of Bucket writes with a precondition.
var (
	// ErrKeyExists: Create found the key already there.
	ErrKeyExists = errors.New("bus: key exists")
	// ErrRevision: Update's revision is no longer the key's latest (someone
	// wrote it in between).
	ErrRevision = errors.New("bus: key revision changed")
)

// Bucket is a JetStream key-value bucket holding state that must outlive a
// restart and be shared by every gateway on the cluster (registered tasks,
// episodes). Values are the caller's bytes; only the latest revision of a
// key is kept. Keys are letters, digits and - _ = / . (not starting or
// ending with a dot).
type Bucket struct {
	kv  jetstream.KeyValue
	bus *Bus // its writes refused for space tell the storage watcher
}

// Bucket creates or updates the bucket name and returns it. ttl bounds how
// long a key lives after its last write (0: forever); a changed ttl applies
// to the existing bucket.
func (b *Bus) Bucket(ctx context.Context, name, description string, ttl time.Duration) (*Bucket, error) {
	kv, err := b.keyValue(ctx, name, description, ttl, b.limits.Buckets)
	if err != nil {
		return nil, fmt.Errorf("bus.Bucket %s: %w", name, err)
	}
	return &Bucket{kv: kv, bus: b}, nil
}

// SmallBucket is Bucket with a fixed 1 MiB bound instead of a share of the
// store, for a few small keys (the fair-share lanes).
func (b *Bus) SmallBucket(ctx context.Context, name, description string, ttl time.Duration) (*Bucket, error) {
	kv, err := b.keyValue(ctx, name, description, ttl, workersBytes)
	if err != nil {
		return nil, fmt.Errorf("bus.SmallBucket %s: %w", name, err)
	}
	return &Bucket{kv: kv, bus: b}, nil
}

// Get returns key's value and revision, or ok false when there is none
// (never written, deleted, or expired).
func (k *Bucket) Get(parent context.Context, key string) (value []byte, rev uint64, ok bool, err error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	e, err := k.kv.Get(ctx, key)
	err = readErr(parent, ctx, err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("bus.Bucket.Get %s: %w", key, err)
	}
	return e.Value(), e.Revision(), true, nil
}

// Create writes key only if it holds no value; otherwise ErrKeyExists.
func (k *Bucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := k.kv.Create(ctx, key, value)
	k.bus.noteWrite(err)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, ErrKeyExists
	}
	if err != nil {
		return 0, fmt.Errorf("bus.Bucket.Create %s: %w", key, err)
	}
	return rev, nil
}

// Update writes key only if rev is still its latest revision; otherwise
// ErrRevision.
func (k *Bucket) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	next, err := k.kv.Update(ctx, key, value, rev)
	k.bus.noteWrite(err)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return 0, ErrRevision
	}
	if err != nil {
		return 0, fmt.Errorf("bus.Bucket.Update %s: %w", key, err)
	}
	return next, nil
}

// Put writes key unconditionally.
func (k *Bucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := k.kv.Put(ctx, key, value)
	if err := k.bus.noteWrite(err); err != nil {
		return 0, fmt.Errorf("bus.Bucket.Put %s: %w", key, err)
	}
	return rev, nil
}

// Delete removes key; deleting a key that holds no value is no error.
func (k *Bucket) Delete(ctx context.Context, key string) error {
	if err := k.kv.Delete(ctx, key); err != nil {
		return fmt.Errorf("bus.Bucket.Delete %s: %w", key, err)
	}
	return nil
}

// Values returns the value of every key matching pattern (a KV key with
// wildcards, such as "abc.*"), by key.
func (k *Bucket) Values(ctx context.Context, pattern string) (map[string][]byte, error) {
	es, err := entries(ctx, k.kv, pattern)
	if err != nil {
		return nil, fmt.Errorf("bus.Bucket.Values: %w", err)
	}
	out := make(map[string][]byte, len(es))
	for _, e := range es {
		out[e.Key()] = e.Value()
	}
	return out, nil
}

// entries reads every entry under pattern in one pass: a watcher that stops
// after the values present when it started.
func entries(parent context.Context, kv jetstream.KeyValue, pattern string) ([]jetstream.KeyValueEntry, error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	w, err := kv.Watch(ctx, pattern, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", pattern, err)
	}
	defer func() {
		_ = w.Stop()
		// The watcher's callback blocks on a full channel; drain it so it
		// sees the stop and closes the channel.
		go func() {
			for range w.Updates() {
			}
		}()
	}()
	var out []jetstream.KeyValueEntry
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("watch %s: watcher closed", pattern)
			}
			if e == nil { // every value present at the start is in
				return out, nil
			}
			out = append(out, e)
		case <-ctx.Done():
			return nil, readErr(parent, ctx, fmt.Errorf("watch %s: %w", pattern, ctx.Err()))
		}
	}
}

// Keys lists the keys that hold a value, in no particular order.
func (k *Bucket) Keys(parent context.Context) ([]string, error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	keys, err := k.kv.Keys(ctx, jetstream.IgnoreDeletes())
	err = readErr(parent, ctx, err)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus.Bucket.Keys: %w", err)
	}
	return keys, nil
}
