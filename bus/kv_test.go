package bus

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	dir := t.TempDir()
	b := startTestBus(t, Options{DataDir: dir})
	ctx := t.Context()
	k, err := b.Bucket(ctx, "things", "test bucket", 0)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := k.Keys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("empty bucket: keys %v, err %v", keys, err)
	}
	if _, _, ok, err := k.Get(ctx, "ci/1_add"); ok || err != nil {
		t.Fatalf("missing key: ok %v err %v", ok, err)
	}
	rev, err := k.Create(ctx, "ci/1_add", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Create(ctx, "ci/1_add", []byte("again")); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second Create: %v, want ErrKeyExists", err)
	}
	v, got, ok, err := k.Get(ctx, "ci/1_add")
	if err != nil || !ok || string(v) != "one" || got != rev {
		t.Fatalf("Get: %q rev %d ok %v err %v (want rev %d)", v, got, ok, err, rev)
	}
	next, err := k.Update(ctx, "ci/1_add", []byte("two"), rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Update(ctx, "ci/1_add", []byte("stale"), rev); !errors.Is(err, ErrRevision) {
		t.Fatalf("stale Update: %v, want ErrRevision", err)
	}
	if _, err := k.Put(ctx, "ep_1.1", []byte("step")); err != nil {
		t.Fatal(err)
	}
	keys, err := k.Keys(ctx)
	slices.Sort(keys)
	if err != nil || !slices.Equal(keys, []string{"ci/1_add", "ep_1.1"}) {
		t.Fatalf("Keys %v, %v", keys, err)
	}

	// Values survive a restart of the embedded server on the same store.
	b.Close()
	b2 := startTestBus(t, Options{DataDir: dir})
	k2, err := b2.Bucket(ctx, "things", "test bucket", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, got, ok, err = k2.Get(ctx, "ci/1_add")
	if err != nil || !ok || string(v) != "two" || got != next {
		t.Fatalf("after restart: %q rev %d ok %v err %v", v, got, ok, err)
	}
}
