package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrQueueFull is returned by PublishJob when JOBS holds MaxQueuedJobs; the
// gateway answers 429 with Retry-After.
var ErrQueueFull = errors.New("bus: job queue full")

// jsErrStoreFailed is the server's "storing a message failed" code
// (JSStreamStoreFailedF); with DiscardNew it carries "maximum messages
// exceeded" (or bytes) when the stream is full. nats.go has no constant.
const jsErrStoreFailed jetstream.ErrorCode = 10077

// Delivery is one delivery of a queued job to a handler: the job itself is
// Data (package dispatch says what it holds).
type Delivery struct {
	ID           string // the Nats-Msg-Id given to PublishJob
	Subject      string
	Data         []byte
	NumDelivered uint64 // 1 on the first delivery
	// Queued is when the stream stored the job, on the server's clock (the
	// one the buckets' entries are stamped with too).
	Queued time.Time
	// Final is true from the MaxDeliver-th delivery on: the handler should
	// stop trying the work and answer with a failure verdict itself. If it
	// still returns an error (it could not store that answer: a full disk),
	// the job is not dropped but delivered again, less often (finalRetry),
	// until its answer is stored.
	Final bool
}

// PublishJob queues data on subject (under jobs.) with id as its dedup id:
// a retried publish with the same id within the dedup window is stored once.
// Once stored, the job is announced to the workers that take subject (wake.go).
func (b *Bus) PublishJob(ctx context.Context, subject, id string, data []byte) error {
	err := b.publish(ctx, "bus.PublishJob", "jobs.", subject, id, data)
	if isFull(err) {
		return ErrQueueFull // the queue's own bound, not the disk: 429, not 507
	}
	if err == nil {
		b.wake(subject)
	}
	return b.noteWrite(err)
}

func isFull(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jsErrStoreFailed {
		return false
	}
	return strings.Contains(apiErr.Description, "maximum messages") ||
		strings.Contains(apiErr.Description, "maximum bytes")
}

// QueueDepth is the number of jobs in JOBS: queued plus delivered but not
// yet acked.
func (b *Bus) QueueDepth(ctx context.Context) (uint64, error) {
	info, err := b.jobs.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("bus.QueueDepth: %w", err)
	}
	return info.State.Msgs, nil
}

// JobsOption tunes Jobs.
type JobsOption func(*jobsConfig)

type jobsConfig struct {
	concurrency int
	filter      string
}

// WithConcurrency bounds the number of handlers running at once (default 1).
func WithConcurrency(n int) JobsOption {
	return func(c *jobsConfig) { c.concurrency = max(n, 1) }
}

// WithFilter restricts the consumer to one subject (e.g. jobs.gpu). On a
// work queue two consumers must not overlap, so every durable either takes
// all of jobs.> (the default) or its own distinct subject.
func WithFilter(subject string) JobsOption {
	return func(c *jobsConfig) { c.filter = subject }
}

// Jobs pulls jobs through the durable consumer and calls handle for each,
// with at most the configured concurrency in flight. A job is acked after
// handle returns nil and redelivered (after NakDelay) when it returns an
// error. While handle runs, the job is kept alive with InProgress every
// AckWait/2; a worker that dies stops doing so and the job is redelivered
// after AckWait. Workers sharing a durable share the queue. An idle worker
// waits for a job's wake-up, not in a pull (PrioritizedJobs).
//
// Jobs returns nil when ctx is cancelled, after the running handlers
// return; their ctx is cancelled too and a job they fail is handed back at
// once (runJob) rather than after AckWait.
func (b *Bus) Jobs(ctx context.Context, durable string, handle func(ctx context.Context, d Delivery) error, opts ...JobsOption) error {
	cfg := jobsConfig{concurrency: 1}
	for _, o := range opts {
		o(&cfg)
	}
	return b.PrioritizedJobs(ctx, []Queue{{Durable: durable, Filter: cfg.filter}}, cfg.concurrency, handle)
}

func (b *Bus) runJob(ctx context.Context, log *slog.Logger, m jetstream.Msg, handle func(context.Context, Delivery) error) {
	md, err := m.Metadata()
	if err != nil {
		log.Error("job without metadata; terminating it", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	if ctx.Err() != nil {
		// Fetched as the loop was stopping: another worker's, at once.
		if err := m.Nak(); err == nil {
			b.wake(m.Subject())
		}
		return
	}
	d := Delivery{
		ID:           m.Headers().Get(jetstream.MsgIDHeader),
		Subject:      m.Subject(),
		Data:         m.Data(),
		NumDelivered: md.NumDelivered,
		Queued:       md.Timestamp,
		Final:        md.NumDelivered >= uint64(b.opts.MaxDeliver),
	}
	herr := runKeptAlive(ctx, b.opts.JobAckWait/2, []jetstream.Msg{m}, func(hctx context.Context) error {
		return handle(hctx, d)
	})
	var aerr error
	switch {
	case herr == nil:
		aerr = m.Ack()
	case ctx.Err() != nil:
		// Shutting down: hand the job back at once, for another worker,
		// rather than leave it for AckWait. No request of this worker's is
		// left open on the server to take it back (PrioritizedJobs only
		// fetches what is there).
		if aerr = m.Nak(); aerr == nil {
			b.wake(d.Subject)
		}
	case d.Final:
		// Its answer could not be stored: dropping the job would leave its
		// batch running forever.
		wait := finalRetry(b.opts.NakDelay, d.NumDelivered-uint64(b.opts.MaxDeliver))
		log.Error("job failed past its last try and its answer is not stored; keeping it", "job", d.ID,
			"deliveries", d.NumDelivered, "retry_in", wait, "err", herr)
		if aerr = m.NakWithDelay(wait); aerr == nil {
			b.wakeAfter(wait, d.Subject)
		}
	default:
		log.Warn("job failed; will be redelivered", "job", d.ID, "deliveries", d.NumDelivered, "err", herr)
		if aerr = m.NakWithDelay(b.opts.NakDelay); aerr == nil {
			b.wakeAfter(b.opts.NakDelay, d.Subject)
		}
	}
	if aerr != nil {
		log.Warn("ack failed; job will be redelivered after AckWait", "job", d.ID, "err", aerr)
	}
}

// finalRetry is how long a job that failed past its last try waits before
// the next: NakDelay doubled per extra delivery, at most a minute.
func finalRetry(nak time.Duration, extra uint64) time.Duration {
	wait := nak
	for range min(extra, 16) {
		wait *= 2
	}
	return min(wait, time.Minute)
}

// QueuedJob is a job still in JOBS: queued, or delivered and not yet acked
// (a worker holds it, or will get it again).
type QueuedJob struct {
	Seq  uint64 // where the stream stored it (WithdrawJob)
	ID   string // its Nats-Msg-Id
	Data []byte
}

// QueuedJobs lists every job in JOBS, oldest first, read within ctx (and
// storeReadTimeout). A work queue admits no consumer beside the workers',
// so it reads message by message, each the next stored after the last:
// deleted sequences cost nothing, and JOBS holds at most MaxQueuedJobs.
func (b *Bus) QueuedJobs(parent context.Context) ([]QueuedJob, error) {
	ctx, cancel := readCtx(parent)
	defer cancel()
	var out []QueuedJob
	for seq := uint64(1); ; {
		m, err := b.jobs.GetMsg(ctx, seq, jetstream.WithGetMsgSubject("jobs.>"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err = readErr(parent, ctx, err); err != nil {
			return nil, fmt.Errorf("bus.QueuedJobs: %w", err)
		}
		out = append(out, QueuedJob{Seq: m.Sequence, ID: m.Header.Get(jetstream.MsgIDHeader), Data: m.Data})
		seq = m.Sequence + 1
	}
}
