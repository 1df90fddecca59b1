package episode

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// Bucket is the KV bucket episodes live in.
const Bucket = "episodes"

// DefaultIdle is how long an episode may go without a step before it expires.
const DefaultIdle = time.Hour

// Retention is how long an expired episode stays readable (GET) before the
// bucket drops it.
const Retention = 24 * time.Hour

// Errors of the store.
var (
	ErrNotFound = errors.New("episode: not found")
	// ErrConflict: another step took this turn first.
	ErrConflict = errors.New("episode: turn already taken by a concurrent step")
)

// Config configures a Store; zero values take the defaults.
type Config struct {
	Idle time.Duration    // DefaultIdle
	Now  func() time.Time // time.Now (tests pass a fake clock)
}

// Store keeps episodes in a KV bucket. Safe for concurrent use; several
// gateways may share one bucket.
type Store struct {
	kv   *bus.Bucket
	idle time.Duration
	now  func() time.Time
}

// Open creates or opens the bucket. Its TTL outlasts the longest episode
// (every turn taken just before the idle timeout) by Retention, so no step
// of a readable episode is dropped before the episode itself.
func Open(ctx context.Context, b *bus.Bus, cfg Config) (*Store, error) {
	if cfg.Idle < 0 {
		return nil, fmt.Errorf("episode.Open: negative idle timeout %s", cfg.Idle)
	}
	if cfg.Idle == 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ttl := cfg.Idle*(MaxTurns+1) + Retention
	kv, err := b.Bucket(ctx, Bucket, "kernelgate episodes: <id> -> episode, <id>.<turn> -> step", ttl)
	if err != nil {
		return nil, fmt.Errorf("episode.Open: %w", err)
	}
	return &Store{kv: kv, idle: cfg.Idle, now: cfg.Now}, nil
}

// Idle is the idle timeout.
func (s *Store) Idle() time.Duration { return s.idle }

// State is e's state now.
func (s *Store) State(e Episode) State { return e.StateAt(s.now()) }

// Start stores a new episode built from e (its task, budget, reward
// function and options) and returns it with its id, turn 0 and times.
func (s *Store) Start(ctx context.Context, e Episode) (Episode, error) {
	now := s.now().UTC()
	e.ID = "ep_" + rand.Text()
	e.Turn, e.Done, e.DoneReason = 0, false, ""
	e.CreatedAt, e.UpdatedAt, e.ExpiresAt = now, now, now.Add(s.idle)
	data, err := json.Marshal(e)
	if err != nil {
		return Episode{}, fmt.Errorf("episode.Start: %w", err)
	}
	if _, err := s.kv.Create(ctx, e.ID, data); err != nil {
		return Episode{}, fmt.Errorf("episode.Start: %w", err)
	}
	return e, nil
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Load returns the episode called id (ErrNotFound when it never existed or
// the bucket dropped it). A step committed without its episode record (a
// crash between the two writes) is applied here.
func (s *Store) Load(ctx context.Context, id string) (Episode, error) {
	if !idPattern.MatchString(id) {
		return Episode{}, fmt.Errorf("episode.Load %q: %w", id, ErrNotFound)
	}
	data, _, ok, err := s.kv.Get(ctx, id)
	if err != nil {
		return Episode{}, fmt.Errorf("episode.Load %s: %w", id, err)
	}
	if !ok {
		return Episode{}, fmt.Errorf("episode.Load %s: %w", id, ErrNotFound)
	}
	var e Episode
	if err := json.Unmarshal(data, &e); err != nil {
		return Episode{}, fmt.Errorf("episode.Load %s: %w", id, err)
	}
	repaired := false
	for !e.Done && e.Turn < e.MaxTurns {
		st, ok, err := s.step(ctx, id, e.Turn+1)
		if err != nil {
			return Episode{}, fmt.Errorf("episode.Load %s: %w", id, err)
		}
		if !ok {
			break
		}
		e = advance(e, st, s.idle)
		repaired = true
	}
	if repaired {
		if err := s.put(ctx, e); err != nil {
			return Episode{}, fmt.Errorf("episode.Load %s: %w", id, err)
		}
	}
	return e, nil
}

// History returns e's steps in turn order.
func (s *Store) History(ctx context.Context, e Episode) ([]Step, error) {
	out := make([]Step, 0, e.Turn)
	for turn := 1; turn <= e.Turn; turn++ {
		st, ok, err := s.step(ctx, e.ID, turn)
		if err != nil {
			return nil, fmt.Errorf("episode.History %s: %w", e.ID, err)
		}
		if ok {
			out = append(out, st)
		}
	}
	return out, nil
}

// Commit records st as e's next turn (st.Turn must be e.Turn+1) and returns
// the updated episode. If another step took that turn first, ErrConflict.
func (s *Store) Commit(ctx context.Context, e Episode, st Step) (Episode, error) {
	if st.Turn != e.Turn+1 {
		return Episode{}, fmt.Errorf("episode.Commit %s: step turn %d after turn %d", e.ID, st.Turn, e.Turn)
	}
	st.At = s.now().UTC()
	data, err := json.Marshal(st)
	if err != nil {
		return Episode{}, fmt.Errorf("episode.Commit %s: %w", e.ID, err)
	}
	if _, err := s.kv.Create(ctx, stepKey(e.ID, st.Turn), data); err != nil {
		if errors.Is(err, bus.ErrKeyExists) {
			return Episode{}, fmt.Errorf("episode.Commit %s turn %d: %w", e.ID, st.Turn, ErrConflict)
		}
		return Episode{}, fmt.Errorf("episode.Commit %s: %w", e.ID, err)
	}
	e = advance(e, st, s.idle)
	// The step is recorded once its key exists: if this write fails, the
	// next Load applies the step to the record, so it is not an error here.
	_ = s.put(ctx, e)
	return e, nil
}

// advance applies st to e.
func advance(e Episode, st Step, idle time.Duration) Episode {
	e.Turn, e.Done, e.DoneReason = st.Turn, st.Done, st.DoneReason
	e.UpdatedAt, e.ExpiresAt = st.At, st.At.Add(idle)
	return e
}

func (s *Store) put(ctx context.Context, e Episode) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = s.kv.Put(ctx, e.ID, data)
	return err
}

func (s *Store) step(ctx context.Context, id string, turn int) (Step, bool, error) {
	data, _, ok, err := s.kv.Get(ctx, stepKey(id, turn))
	if err != nil || !ok {
		return Step{}, false, err
	}
	var st Step
	if err := json.Unmarshal(data, &st); err != nil {
		return Step{}, false, fmt.Errorf("step %d: %w", turn, err)
	}
	return st, true, nil
}

func stepKey(id string, turn int) string { return id + "." + strconv.Itoa(turn) }
