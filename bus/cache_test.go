package bus

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestCache(t *testing.T) {
	b := startTestBus(t, Options{})
	ctx := t.Context()
	sum := sha256.Sum256([]byte("task|code|options"))
	key := hex.EncodeToString(sum[:])

	if v, ok, err := b.CacheGet(ctx, key); err != nil || ok || v != nil {
		t.Fatalf("missing key: got (%q, %v, %v), want (nil, false, nil)", v, ok, err)
	}
	if err := b.CachePut(ctx, key, []byte(`{"status":"PASSED"}`)); err != nil {
		t.Fatal(err)
	}
	v, ok, err := b.CacheGet(ctx, key)
	if err != nil || !ok || string(v) != `{"status":"PASSED"}` {
		t.Fatalf("after put: got (%q, %v, %v)", v, ok, err)
	}
	if err := b.CachePut(ctx, key, []byte(`{"status":"INCORRECT"}`)); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := b.CacheGet(ctx, key); string(v) != `{"status":"INCORRECT"}` {
		t.Fatalf("after overwrite: got %q", v)
	}
}
