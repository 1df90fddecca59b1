package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kernelgate/kernelgate/bus"
)

// Buckets: one record per search, one value per step (<id>.<seq>). Steps
// are kept apart so that a search's record stays small and a resume reads
// exactly its own steps.
const (
	SearchBucket = "searches"
	StepBucket   = "search_steps"
)

// record is what the searches bucket holds: the request without its API
// key, and the status without its node list (rebuilt from the steps).
// TaskSource is the task's source when the request names it by id (a
// request with a reference holds it already), for resumes.
type record struct {
	Request    Request `json:"request"`
	Status     Status  `json:"status"`
	Seq        int     `json:"seq"` // the last step stored
	TaskSource string  `json:"task_source,omitempty"`
}

type store struct {
	searches, steps *bus.Bucket
}

func openStore(ctx context.Context, b *bus.Bus) (*store, error) {
	s, err := b.Bucket(ctx, SearchBucket, "kernelgate searches: <id> -> request and status", 0)
	if err != nil {
		return nil, err
	}
	st, err := b.Bucket(ctx, StepBucket, "kernelgate search steps: <id>.<seq> -> step", 0)
	if err != nil {
		return nil, err
	}
	return &store{searches: s, steps: st}, nil
}

func stepKey(id string, seq int) string { return fmt.Sprintf("%s.%d", id, seq) }

func (s *store) create(ctx context.Context, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("runner: encode %s: %w", rec.Status.SearchID, err)
	}
	_, err = s.searches.Create(ctx, rec.Status.SearchID, b)
	return err
}

func (s *store) put(ctx context.Context, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("runner: encode %s: %w", rec.Status.SearchID, err)
	}
	_, err = s.searches.Put(ctx, rec.Status.SearchID, b)
	return err
}

func (s *store) putStep(ctx context.Context, ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("runner: encode step %s.%d: %w", ev.SearchID, ev.Seq, err)
	}
	_, err = s.steps.Put(ctx, stepKey(ev.SearchID, ev.Seq), b)
	return err
}

func (s *store) step(ctx context.Context, id string, seq int) (Event, bool, error) {
	b, _, ok, err := s.steps.Get(ctx, stepKey(id, seq))
	if err != nil || !ok {
		return Event{}, false, err
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, false, fmt.Errorf("runner: step %s.%d: %w", id, seq, err)
	}
	return ev, true, nil
}

// load returns a search's record and its steps in Seq order: 1 up to the
// last one stored, which may be past rec.Seq when the process died between
// storing a step and its record.
func (s *store) load(ctx context.Context, id string) (record, []Event, error) {
	rec, ok, err := s.record(ctx, id)
	if err != nil {
		return record{}, nil, err
	}
	if !ok {
		return record{}, nil, fmt.Errorf("search %q: %w", id, ErrNotFound)
	}
	steps, err := s.stepsOf(ctx, rec)
	if err != nil {
		return record{}, nil, err
	}
	return rec, steps, nil
}

// stepsOf are rec's stored steps in order; with an error (a step the store
// lost), those before the gap.
func (s *store) stepsOf(ctx context.Context, rec record) ([]Event, error) {
	var steps []Event
	for seq := 1; ; seq++ {
		ev, ok, err := s.step(ctx, rec.Status.SearchID, seq)
		if err != nil {
			return steps, err
		}
		if !ok {
			if seq <= rec.Seq {
				return steps, fmt.Errorf("runner: search %s: step %d of %d is missing", rec.Status.SearchID, seq, rec.Seq)
			}
			return steps, nil
		}
		steps = append(steps, ev)
	}
}

// ids lists every stored search.
func (s *store) ids(ctx context.Context) ([]string, error) { return s.searches.Keys(ctx) }
