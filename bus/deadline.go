package bus

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStoreTimeout: a read of a stream or bucket got no answer within
// storeReadTimeout. A damaged block in a bucket's file store was seen to
// leave a watcher without its "that is all" marker, and a GET without a
// deadline waited for it 90 s and more; every read is bounded instead.
var ErrStoreTimeout = errors.New("bus: the store did not answer in time")

// storeReadTimeout bounds one read when the caller's ctx allows longer.
const storeReadTimeout = 10 * time.Second

// readCtx is ctx bounded by storeReadTimeout.
func readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, storeReadTimeout)
}

// readErr wraps err as ErrStoreTimeout when the bound of readCtx, not the
// caller's ctx, ended the read.
func readErr(parent, rctx context.Context, err error) error {
	if err != nil && parent.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%s): %v", ErrStoreTimeout, storeReadTimeout, err)
	}
	return err
}
