package bus

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Wake-ups. A worker with a free slot does not poll its queues. Once the
// stream has stored a job, its publisher sends a core NATS message on
// wakePrefix + the job's subject; every worker that takes that subject
// subscribes to it (interest travels over a cluster's routes and leaf
// nodes, so a worker on another host hears it too) and fetches, in
// priority order, from the queues it was woken for. Core NATS is at most
// once, and a job can come back without a publish (redelivered after
// JobAckWait: its worker died), so each worker also fetches from every
// queue every JobRecheck and after a reconnect. A job handed back with a
// nak is announced again when its delay runs out (jobs.go).

// wakePrefix starts a wake-up's subject: wake.jobs.eval.cpu.lane0 for a job
// on jobs.eval.cpu.lane0.
const wakePrefix = "wake."

// consumerLag: a queue woken this recently is fetched again when found
// empty, after 1, 2, 4, ... ms. In a cluster the stream's ack can come
// before the consumer's server has applied the job; one server answers at
// once.
const consumerLag = 25 * time.Millisecond

const firstRetry = time.Millisecond

// never: a time before every other, for a queue not yet (or no longer
// known to be) looked in.
const never = time.Duration(math.MinInt64)

// wake announces a job stored on subject. A wake-up that cannot be sent
// costs its job a wait of at most JobRecheck, not the job.
func (b *Bus) wake(subject string) {
	if err := b.nc.Publish(wakePrefix+subject, nil); err != nil {
		b.log.Debug("wake-up not sent", "subject", subject, "err", err)
	}
}

// wakeAfter announces subject's job again after d, when a nak's delay lets
// the server deliver it. A process that exits first leaves it to JobRecheck.
func (b *Bus) wakeAfter(d time.Duration, subject string) {
	time.AfterFunc(d, func() { b.wake(subject) })
}

// waiter is one PrioritizedJobs loop's view of which of its queues may hold
// a job. Times are offsets on the monotonic clock from start.
type waiter struct {
	start time.Time
	every time.Duration // JobRecheck
	subs  []*nats.Subscription
	poke  chan struct{} // capacity 1: wake-ups coalesce
	stale atomic.Bool   // set on a reconnect: look in every queue

	woken []atomic.Int64 // per queue: when its last wake-up came (written by the subscriptions)
	// The loop's own: per queue, when the last fetch that found it short
	// began (never: look in it); when every queue is next looked in.
	checked   []time.Duration
	recheckAt time.Duration
	backoff   time.Duration
}

// listen subscribes to the wake-ups of queues. The caller must close it.
func (b *Bus) listen(ctx context.Context, queues []Queue) (*waiter, error) {
	w := &waiter{
		start: time.Now(), every: b.opts.JobRecheck, poke: make(chan struct{}, 1),
		woken: make([]atomic.Int64, len(queues)), checked: make([]time.Duration, len(queues)),
		backoff: firstRetry,
	}
	for i, q := range queues {
		w.woken[i].Store(int64(never / 2))
		w.checked[i] = never
		filter := q.Filter
		if filter == "" {
			filter = "jobs.>"
		}
		sub, err := b.nc.Subscribe(wakePrefix+filter, func(*nats.Msg) {
			w.woken[i].Store(int64(w.now()))
			w.signal()
		})
		if err != nil {
			w.close()
			return nil, err
		}
		w.subs = append(w.subs, sub)
	}
	// Not an error when it fails (the server away): the first round looks
	// in every queue, and JobRecheck covers a wake-up sent before the
	// server knew. Nor worth waiting long for.
	fctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := b.flush(fctx); err != nil {
		b.log.Debug("wake-up subscriptions not confirmed", "err", err)
	}
	b.wakersMu.Lock()
	if b.wakers == nil {
		b.wakers = map[*waiter]struct{}{}
	}
	b.wakers[w] = struct{}{}
	b.wakersMu.Unlock()
	return w, nil
}

func (b *Bus) unlisten(w *waiter) {
	b.wakersMu.Lock()
	delete(b.wakers, w)
	b.wakersMu.Unlock()
	w.close()
}

// rouse makes every waiter look in all its queues: wake-ups sent while
// the connection was down were lost.
func (b *Bus) rouse() {
	b.wakersMu.Lock()
	defer b.wakersMu.Unlock()
	for w := range b.wakers {
		w.stale.Store(true)
		w.signal()
	}
}

func (w *waiter) close() {
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
}

func (w *waiter) now() time.Duration { return time.Since(w.start) }

func (w *waiter) signal() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// beginRound forgets what is known of every queue when it is time to look
// in all of them again.
func (w *waiter) beginRound() {
	now := w.now()
	if w.stale.Swap(false) || now >= w.recheckAt {
		w.recheckAt = now + w.every
		for i := range w.checked {
			w.checked[i] = never
		}
	}
}

// due reports whether queue i may hold a job: not looked in since it was
// woken, since the last recheck, or within consumerLag after its wake-up.
func (w *waiter) due(i int) bool {
	return time.Duration(w.woken[i].Load())+consumerLag > w.checked[i]
}

// found notes that a fetch from queue i that began at began came up short.
func (w *waiter) found(i int, began time.Duration) { w.checked[i] = began }

func (w *waiter) anyDue() bool {
	for i := range w.checked {
		if w.due(i) {
			return true
		}
	}
	return false
}

// wait blocks until a wake-up, the next recheck, ctx's end (false) or,
// while a woken queue was just found empty, the next short retry.
func (w *waiter) wait(ctx context.Context) bool {
	d := w.recheckAt - w.now()
	if w.anyDue() {
		d = min(d, w.backoff)
		w.backoff = min(2*w.backoff, consumerLag)
	}
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-w.poke:
		w.backoff = firstRetry
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}
