package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
)

// A notification lost on the way costs Poll, not the wait: the
// follower re-reads the store. Duplicates and garbage are dropped.
func TestFollowerRereadsTheStore(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := &Service{Bus: b, Poll: 100 * time.Millisecond, Log: testLogger()}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f, err := srv.Follow(ctx, "b_F", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	result := func(i int) []byte {
		data, _ := json.Marshal(Result{Index: i, ID: fmt.Sprintf("b_F-%05d", i), Reward: float64(i)})
		return data
	}
	// Stored, never announced.
	if _, err := b.PutResult(ctx, "b_F", 1, result(1)); err != nil {
		t.Fatal(err)
	}
	r, err := f.Next(ctx)
	if err != nil || r.Index != 1 {
		t.Fatalf("next = %+v, %v; want index 1 from the store", r, err)
	}
	for _, data := range [][]byte{result(1), []byte("{"), result(7), result(0)} {
		if err := b.Notify(ctx, ResultsSubject("b_F"), data); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := f.Next(ctx); err != nil || r.Index != 0 {
		t.Fatalf("next = %+v, %v; want index 0", r, err)
	}
	if _, err := f.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after both: %v, want io.EOF", err)
	}
}
