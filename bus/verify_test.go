package bus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// Verify reads a stopped store: every stream and bucket listed, none with a
// problem; a store in use is refused, a directory without one says so, and
// a stream whose metadata is damaged is reported by name.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PutBatch(t.Context(), "b1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(t.Context(), dir, kgtest.Logger(t)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("Verify of a store in use = %v, want refused", err)
	}
	b.Close()

	reps, err := Verify(t.Context(), dir, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]StoreReport{}
	for _, r := range reps {
		names[r.Name] = r
		if len(r.Problems) > 0 {
			t.Errorf("%s: problems %v in a sound store", r.Name, r.Problems)
		}
	}
	for _, want := range []string{JobsStream, EventsStream, "KV_" + BatchBucket, "KV_" + CacheBucket} {
		if _, ok := names[want]; !ok {
			t.Errorf("no report for %s: %v", want, reps)
		}
	}
	if names["KV_"+BatchBucket].Messages != 1 {
		t.Errorf("KV_batches holds %d messages, want 1", names["KV_"+BatchBucket].Messages)
	}

	meta := filepath.Join(dir, "nats", "jetstream", "$G", "streams", "KV_"+BatchBucket, "meta.inf")
	if err := os.WriteFile(meta, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	reps, err = Verify(t.Context(), dir, kgtest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range reps {
		if r.Name == "KV_"+BatchBucket && len(r.Problems) > 0 && strings.Contains(r.Problems[0], "could not be loaded") {
			found = true
		}
	}
	if !found {
		t.Fatalf("damaged KV_batches metadata not reported: %+v", reps)
	}
	if _, err := Open(t.Context(), Options{DataDir: dir}, kgtest.Logger(t)); err == nil || !strings.Contains(err.Error(), "KV_batches could not be loaded") {
		t.Fatalf("Open over a stream that cannot load = %v, want refused naming it", err)
	}

	if _, err := Verify(t.Context(), t.TempDir(), nil); !errors.Is(err, ErrNoStore) {
		t.Fatalf("Verify of an empty directory = %v, want ErrNoStore", err)
	}
}
