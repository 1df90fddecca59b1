package bus

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pull asks for up to n messages, waiting at most maxWait for them, and
// calls fn with each as it arrives: a message must not sit in a half-filled
// batch while its AckWait runs. It returns how many went to fn; an expired
// wait is not an error.
//
// The wait is not cut short when ctx ends. A fetch abandoned early leaves
// its pull request on the server until the client's unsubscribe lands, and
// an event or job published in that gap went to the dead inbox and sat
// unacked for AckWait (a restarted export sink waited 20 s for one). Left to
// expire, the request ends with the server's own answer; what arrives after
// ctx ended is handed back for when this request is gone (a plain nak would
// come straight back into it and spend a delivery each time).
func pull(ctx context.Context, cons jetstream.Consumer, n int, maxWait time.Duration, fn func(jetstream.Msg)) (int, error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxWait)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		if fctx.Err() != nil {
			return 0, nil
		}
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		if ctx.Err() != nil {
			_ = m.NakWithDelay(maxWait) // a lost nak costs AckWait, not the message
			continue
		}
		got++
		fn(m)
	}
	err = batch.Error()
	if err == nil || fctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) || errors.Is(err, jetstream.ErrNoMessages) {
		return got, nil
	}
	return got, err
}

// runKeptAlive runs fn and, while it runs, tells the server every interval
// that msgs are still being worked on, so a handler that outlives AckWait is
// not redelivered to another worker. The keepalive stops with ctx: a
// consumer that is going away no longer vouches for its messages.
func runKeptAlive(ctx context.Context, interval time.Duration, msgs []jetstream.Msg, fn func(context.Context) error) error {
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				for _, m := range msgs {
					_ = m.InProgress() // a lost one costs a redelivery, not data
				}
			}
		}
	})
	err := fn(hctx)
	stop()
	return err
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
