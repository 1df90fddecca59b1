package bus

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStoreTimeout: a read of a stream or bucket got no answer within
// storeReadTimeout, or within the caller's deadline when that came first
// (a request that must answer in its own time). A damaged block in a bucket's file store was seen to
// leave a watcher without its "that is all" marker, and a GET without a
// deadline waited for it 90 s and more; every read is bounded instead.
var ErrStoreTimeout = errors.New("bus: the store did not answer in time")

// storeReadTimeout bounds one read when the caller's ctx allows longer.
const storeReadTimeout = 10 * time.Second

// readCtx is ctx bounded by storeReadTimeout.
func readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, storeReadTimeout)
}

// readErr wraps err as ErrStoreTimeout when a deadline, readCtx's bound or
// the caller's own, ended the read; a caller that gave up (cancelled) gets
// err as it is.
func readErr(parent, rctx context.Context, err error) error {
	if err == nil || !errors.Is(rctx.Err(), context.DeadlineExceeded) || errors.Is(parent.Err(), context.Canceled) {
		return err
	}
	if parent.Err() != nil {
		return fmt.Errorf("%w (the caller's deadline): %v", ErrStoreTimeout, err)
	}
	return fmt.Errorf("%w (%s): %v", ErrStoreTimeout, storeReadTimeout, err)
}
