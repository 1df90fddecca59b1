package bus

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

func TestValidID(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"b_ABC234", true},
		{"e_x-y", true},
		{"", false},
		{"a.b", false},
		{"a*", false},
		{">", false},
		{"a b", false},
		{"ü", false},
		{string(make([]byte, 65)), false},
	} {
		if got := ValidID(tt.id); got != tt.ok {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.ok)
		}
	}
}

func TestBatchRecord(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	if v, ok, err := b.Batch(ctx, "b1"); err != nil || ok || v != nil {
		t.Fatalf("unknown batch: (%q, %v, %v)", v, ok, err)
	}
	if _, ok, err := b.Batch(ctx, "b1.*"); err != nil || ok {
		t.Fatalf("invalid id: ok %v err %v, want a plain miss", ok, err)
	}
	if err := b.PutBatch(ctx, "b1", []byte(`{"total":3}`)); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Batch(ctx, "b1"); err != nil || !ok || string(v) != `{"total":3}` {
		t.Fatalf("after put: (%q, %v, %v)", v, ok, err)
	}
	if err := b.PutBatch(ctx, "b.1", nil); err == nil {
		t.Error("PutBatch with a dotted id succeeded")
	}
}

func TestPutResultFirstWins(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	got, err := b.PutResult(ctx, "b1", 2, []byte("first"))
	if err != nil || string(got) != "first" {
		t.Fatalf("first put: (%q, %v)", got, err)
	}
	// A redelivered job evaluated again must not change the answer.
	got, err = b.PutResult(ctx, "b1", 2, []byte("second"))
	if err != nil || string(got) != "first" {
		t.Fatalf("second put: (%q, %v), want the stored first", got, err)
	}
	for _, bad := range []struct {
		batch string
		index int
	}{{"b.1", 0}, {"", 0}, {"b1", -1}} {
		if _, err := b.PutResult(ctx, bad.batch, bad.index, nil); err == nil {
			t.Errorf("PutResult(%q, %d) succeeded", bad.batch, bad.index)
		}
	}
}

// Results reads every result of one batch (more than the watcher's channel
// holds), and nothing of a batch whose id it prefixes or of the record.
func TestResults(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	const n = 300
	for i := range n {
		if _, err := b.PutResult(ctx, "b1", i, fmt.Appendf(nil, "r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.PutResult(ctx, "b10", 0, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutBatch(ctx, "b1", []byte("record")); err != nil {
		t.Fatal(err)
	}
	got, err := b.Results(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d results, want %d", len(got), n)
	}
	for i := range n {
		if want := fmt.Sprintf("r%d", i); string(got[i]) != want {
			t.Fatalf("result %d = %q, want %q", i, got[i], want)
		}
	}
	if got, err := b.Results(ctx, "nope"); err != nil || len(got) != 0 {
		t.Fatalf("unknown batch: (%v, %v)", got, err)
	}
	if _, err := b.Results(ctx, "b1.>"); err == nil {
		t.Fatal("Results with a wildcard id succeeded")
	}
}

func TestResultsExpire(t *testing.T) {
	b := startTestBus(t, Options{ResultTTL: time.Second})
	ctx := t.Context()
	if err := b.PutBatch(ctx, "b1", []byte("record")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutResult(ctx, "b1", 0, []byte("r")); err != nil {
		t.Fatal(err)
	}
	kgtest.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		_, ok, err := b.Batch(ctx, "b1")
		rs, rerr := b.Results(ctx, "b1")
		if err := errors.Join(err, rerr); err != nil {
			return err
		}
		if ok || len(rs) != 0 {
			return fmt.Errorf("record present %v, %d results: not expired yet", ok, len(rs))
		}
		return nil
	})
}
