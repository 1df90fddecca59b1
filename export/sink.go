package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// Defaults of the sink.
const (
	// Durable is the sink's consumer name on the EVENTS stream: the one
	// bus.Open creates, whose acks decide what EVENTS may drop.
	Durable = bus.SinkDurable
	// BatchSize and BatchWait bound one batch (and so one file per table
	// and date): up to 512 events, waiting at most 2s to fill it.
	BatchSize = 512
	BatchWait = 2 * time.Second
	// DefaultDedupWindow is how long written ids are remembered. A batch is
	// redelivered within the bus's EventAckWait (20 s), so a day is
	// generous; at restart the window is counted back from the newest file.
	DefaultDedupWindow = 24 * time.Hour
)

// Sink writes event batches to Parquet files under root. Handle is safe for
// concurrent use but serialises batches.
type Sink struct {
	root     string
	writerID string
	log      *slog.Logger
	now      func() time.Time

	mu     sync.Mutex
	seeded bool
	seen   *seenSet
	seq    uint64

	stopped  chan struct{} // closed when Run returns
	stopOnce sync.Once
}

// Option configures a Sink.
type Option func(*Sink)

// WithDedupWindow sets how long written event ids are remembered.
func WithDedupWindow(d time.Duration) Option {
	return func(s *Sink) { s.seen.window = d }
}

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(s *Sink) { s.now = now } }

var writerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// NewSink returns a sink writing under root. writerID names this writer in
// every file name (unique per process writing to root: a host name plus a
// role, say). Nothing is read until the first Handle.
func NewSink(root, writerID string, log *slog.Logger, opts ...Option) (*Sink, error) {
	if root == "" {
		return nil, errors.New("export.NewSink: empty root")
	}
	if !writerIDPattern.MatchString(writerID) {
		return nil, fmt.Errorf("export.NewSink: writer id %q must match %s", writerID, writerIDPattern)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sink{
		root: root, writerID: writerID, now: time.Now,
		log:  log.With("component", "export.sink", "writer", writerID),
		seen: newSeenSet(DefaultDedupWindow), stopped: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	if s.seen.window <= 0 {
		return nil, fmt.Errorf("export.NewSink: dedup window must be positive, got %s", s.seen.window)
	}
	return s, nil
}

// Run feeds the sink from the EVENTS stream until ctx is cancelled (then it
// returns nil). A batch is acked only after Handle has renamed its files.
func (s *Sink) Run(ctx context.Context, b *bus.Bus) error {
	defer s.stopOnce.Do(func() { close(s.stopped) })
	return b.Events(ctx, Durable, BatchSize, BatchWait, s.Handle)
}

// Flush waits until the sink has written every event logged on b so far
// (its consumer has nothing pending or unacked). It returns early with the
// events left when Run has returned (the sink failed) or ctx ends; those
// stay in EVENTS for the next start.
func (s *Sink) Flush(ctx context.Context, b *bus.Bus) (left uint64, err error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		// A failed read keeps the last count (one that ctx's end cut short says 0).
		if n, err := b.EventsBacklog(ctx, Durable); err == nil {
			if left = n; n == 0 {
				return 0, nil
			}
		}
		select {
		case <-s.stopped:
			return left, fmt.Errorf("export.Sink.Flush: the sink stopped with %d events unwritten", left)
		case <-ctx.Done():
			return left, fmt.Errorf("export.Sink.Flush: %d events unwritten: %w", left, ctx.Err())
		case <-tick.C:
		}
	}
}

// Handle writes one batch: one file per (table, date), each renamed into
// place before Handle returns nil. Events already written (by id) are
// dropped, so a redelivered batch adds nothing. An error means the batch
// must be redelivered; what was renamed before it is remembered.
func (s *Sink) Handle(ctx context.Context, evs []bus.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if !s.seeded || redelivered(evs) {
		// A redelivery may follow another writer's crash after its rename:
		// read what landed on disk since we last looked.
		if err := s.seen.refresh(ctx, s.root, s.writerID, s.log); err != nil {
			return fmt.Errorf("export.Handle: dedup seed: %w", err)
		}
		s.seeded = true
	}
	s.seen.prune()

	parts, stats := s.group(evs, now)
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("export.Handle: %w", err)
		}
		s.seq++
		written := s.now()
		name := partName(s.writerID, written, s.seq)
		dir := partDir(s.root, p.table, p.date)
		meta := map[string]string{MetaSchemaVersion: SchemaVersion, MetaTable: p.table, MetaWriter: s.writerID}
		if err := p.write(dir, name, meta); err != nil {
			return fmt.Errorf("export.Handle: %w", err)
		}
		s.seen.add(written, p.ids...)
		s.seen.files[filepath.Join(dir, name)] = written
		s.log.Debug("wrote part", "table", p.table, "date", p.date, "file", name, "rows", len(p.ids))
	}
	if stats.duplicates > 0 || stats.skipped > 0 || stats.rejected > 0 {
		s.log.Info("batch", "events", len(evs), "files", len(parts),
			"duplicates", stats.duplicates, "skipped", stats.skipped, "rejected", stats.rejected)
	}
	return nil
}

func redelivered(evs []bus.Event) bool {
	return slices.ContainsFunc(evs, func(e bus.Event) bool { return e.NumDelivered > 1 })
}

// part is the rows of one (table, date) of a batch.
type part struct {
	table, date string
	ids         []string
	write       func(dir, name string, meta map[string]string) error
}

type batchStats struct{ duplicates, skipped, rejected int }

// tableRows collects the rows of one table by date.
type tableRows[T any] struct {
	table string
	rows  map[string][]T
	ids   map[string][]string
}

func newTableRows[T any](table string) *tableRows[T] {
	return &tableRows[T]{table: table, rows: map[string][]T{}, ids: map[string][]string{}}
}

func (t *tableRows[T]) add(id string, ts time.Time, row T) {
	date := ts.UTC().Format(time.DateOnly)
	t.rows[date] = append(t.rows[date], row)
	t.ids[date] = append(t.ids[date], id)
}

func (t *tableRows[T]) parts() []part {
	var ps []part
	for date, rows := range t.rows {
		ps = append(ps, part{table: t.table, date: date, ids: t.ids[date],
			write: func(dir, name string, meta map[string]string) error {
				return writePart(dir, name, rows, meta)
			}})
	}
	return ps
}

// group decodes evs and sorts the new rows into parts, in a stable order.
func (s *Sink) group(evs []bus.Event, now time.Time) ([]part, batchStats) {
	evals := newTableRows[Evaluation](TableEvaluations)
	steps := newTableRows[EpisodeStep](TableEpisodeSteps)
	rejected := newTableRows[Rejected](TableRejected)
	search := newTableRows[SearchStep](TableSearchSteps)
	skills := newTableRows[Skill](TableSkills)
	searches := newTableRows[Search](TableSearches)
	calls := newTableRows[LLMCall](TableLLMCalls)
	inBatch := map[string]bool{}
	var st batchStats
	for _, ev := range evs {
		d := decodeAny(ev, now, s.log)
		if d.skip {
			st.skipped++
			continue
		}
		if d.id != "" && (inBatch[d.id] || s.seen.has(d.id)) {
			st.duplicates++
			continue
		}
		inBatch[d.id] = true
		switch r := d.row.(type) {
		case Evaluation:
			evals.add(d.id, r.TS, r)
		case EpisodeStep:
			steps.add(d.id, r.TS, r)
		case SearchStep:
			search.add(d.id, r.TS, r)
		case Skill:
			skills.add(d.id, skillDay(r, now), r)
		case Search:
			searches.add(d.id, r.TS, r)
		case LLMCall:
			calls.add(d.id, r.TS, r)
		case Rejected:
			st.rejected++
			rejected.add(d.id, r.TS, r)
		}
	}
	parts := slices.Concat(evals.parts(), steps.parts(), rejected.parts(), search.parts(), skills.parts(), searches.parts(), calls.parts())
	slices.SortFunc(parts, func(a, b part) int {
		return cmp.Or(cmp.Compare(a.table, b.table), cmp.Compare(a.date, b.date))
	})
	return parts, st
}
