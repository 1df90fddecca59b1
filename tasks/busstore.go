package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kernelgate/kernelgate/bus"
)

// Bucket is the KV bucket that holds API-registered tasks (key: the id).
const Bucket = "tasks"

// BusStore is a Store in a JetStream KV bucket: tasks survive restarts and
// every gateway on the cluster sees the same ones.
type BusStore struct {
	kv *bus.Bucket
}

// OpenBusStore creates or opens the tasks bucket (no expiry).
func OpenBusStore(ctx context.Context, b *bus.Bus) (*BusStore, error) {
	kv, err := b.Bucket(ctx, Bucket, "kernelgate tasks registered over the API: id -> task JSON", 0)
	if err != nil {
		return nil, fmt.Errorf("tasks.OpenBusStore: %w", err)
	}
	return &BusStore{kv: kv}, nil
}

func (s *BusStore) Get(ctx context.Context, id string) (Task, bool, error) {
	data, _, ok, err := s.kv.Get(ctx, id)
	if err != nil || !ok {
		return Task{}, false, err
	}
	var t Task
	if err := json.Unmarshal(data, &t); err != nil {
		return Task{}, false, fmt.Errorf("tasks.BusStore: task %s: %w", id, err)
	}
	return t, true, nil
}

func (s *BusStore) Create(ctx context.Context, t Task) error {
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks.BusStore: %w", err)
	}
	if _, err := s.kv.Create(ctx, t.ID, data); err != nil {
		if errors.Is(err, bus.ErrKeyExists) {
			return ErrExists
		}
		return err
	}
	return nil
}

// List reads every key: one round trip per task, fine for the hundreds a
// registry holds.
func (s *BusStore) List(ctx context.Context) ([]Task, error) {
	keys, err := s.kv.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Task, 0, len(keys))
	for _, k := range keys {
		t, ok, err := s.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok { // deleted between Keys and Get
			out = append(out, t)
		}
	}
	return out, nil
}
