package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// CacheGet returns the cached value under key, or ok false when there is
// none (never stored, expired, or deleted). Keys are what the caller
// computes (hex sha256 of task hash, code hash and options); they must be
// valid KV keys: letters, digits, and - _ = / .
func (b *Bus) CacheGet(parent context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	e, err := b.kv.Get(ctx, key)
	err = readErr(parent, ctx, err)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("bus.CacheGet %s: %w", key, err)
	}
	return e.Value(), true, nil
}

// CachePut stores value under key for CacheTTL. A later put replaces it.
func (b *Bus) CachePut(ctx context.Context, key string, value []byte) error {
	if _, err := b.kv.Put(ctx, key, value); b.noteWrite(err) != nil {
		return fmt.Errorf("bus.CachePut %s: %w", key, err)
	}
	return nil
}
