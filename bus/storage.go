package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// A full disk must cost answers, never data: the gateway refuses new work
// (507, /readyz 503) while the store cannot take writes, and takes it again
// by itself once space returns. The watcher below decides "cannot take
// writes" from what it can see every storageCheckEvery:
//
//   - the data directory's free space against MinFree, and a probe write
//     (the embedded store lives there, and serve's Parquet log);
//   - the embedded JetStream, which stops itself when a write finds the disk
//     full ("JetStream out of resources, will be DISABLED"): the watcher
//     starts it again once the probe succeeds;
//   - the stores that refuse writes when full (EVENTS, the batches bucket)
//     against their byte limits (a full JOBS is a 429 queue_full instead);
//   - a write the server refused for space since the last check (an
//     external server's disk, a limit reached between two checks).

// ErrStorageFull wraps why the store cannot take writes now.
var ErrStorageFull = errors.New("storage full")

// storageCheckEvery is how often the watcher looks; /readyz turns within it.
const storageCheckEvery = time.Second

// fullAt is the share of a stream's byte limit past which it counts as
// full: the next few writes would be refused.
const fullAt = 0.95

// probeName is the file the watcher writes and removes in the data directory.
const probeName = ".kernelgate-write-probe"

// storage is the watcher's state.
type storage struct {
	checking sync.Mutex // one check at a time (the watcher's, Open's, a test's)

	mu      sync.Mutex
	reason  string    // why the store cannot take writes; "" when it can
	refused time.Time // when a write was last refused for space (noteWrite)
	refusal string    // that write's error
}

// Writable returns nil when the store can take writes, else an error
// wrapping ErrStorageFull that says why, in words for an operator.
func (b *Bus) Writable() error {
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	switch {
	case b.store.reason != "":
		return fmt.Errorf("%w: %s", ErrStorageFull, b.store.reason)
	case !b.store.refused.IsZero():
		return fmt.Errorf("%w: a write was refused: %s", ErrStorageFull, b.store.refusal)
	}
	return nil
}

// IsStorageFull reports whether err is a write refused for lack of space:
// the disk, the server's store limit, or a stream's or bucket's byte limit.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrStorageFull) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jsErrInsufficientResources, jsErrStorageExceeded:
			return true
		case jsErrStoreFailed:
			return strings.Contains(apiErr.Description, "maximum bytes") || strings.Contains(apiErr.Description, "no space")
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "no space left") || strings.Contains(msg, "insufficient resources") ||
		strings.Contains(msg, "maximum bytes exceeded")
}

// Server error codes nats.go has no constants for.
const (
	jsErrInsufficientResources jetstream.ErrorCode = 10023 // the server's store limit, or the disk
	jsErrStorageExceeded       jetstream.ErrorCode = 10047 // a reservation past the server's store limit
)

// noteWrite records a write the server refused for space, so that Writable
// says so before the next check; it returns err unchanged.
func (b *Bus) noteWrite(err error) error {
	if IsStorageFull(err) {
		b.store.mu.Lock()
		b.store.refused, b.store.refusal = time.Now(), err.Error()
		b.store.mu.Unlock()
	}
	return err
}

// watchStorage checks the store every storageCheckEvery until stop closes.
func (b *Bus) watchStorage(stop <-chan struct{}) {
	t := time.NewTicker(storageCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			b.checkStorage()
		}
	}
}

// checkStorage sets the watcher's state from one look.
func (b *Bus) checkStorage() {
	b.store.checking.Lock()
	defer b.store.checking.Unlock()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), storageCheckEvery)
	defer cancel()
	reason := b.diskReason()
	if js := b.jetStreamReason(reason == ""); reason == "" {
		reason = js
	}
	if reason == "" {
		reason = b.limitsReason(ctx)
	}
	b.store.mu.Lock()
	was := b.store.reason
	b.store.reason = reason
	if reason == "" && b.store.refused.Before(start) {
		// Every check passes since the refused write: space came back (or
		// the server was restarted). The next refusal latches again.
		b.store.refused, b.store.refusal = time.Time{}, ""
	}
	b.store.mu.Unlock()
	switch {
	case was == "" && reason != "":
		b.log.Error("the store cannot take writes; new work is refused until it can", "reason", reason)
	case was != "" && reason == "":
		b.log.Info("the store takes writes again", "was", was)
	}
}

// diskReason checks the data directory, when there is one: free space and a
// probe. It holds the embedded store, and serve's Parquet log with an
// external server too (a sink that cannot write there fills EVENTS).
func (b *Bus) diskReason() string {
	if b.opts.DataDir == "" {
		return ""
	}
	dir := b.opts.DataDir
	// With an external server nothing has made it yet before the sink's
	// first file; serve writes there either way.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Sprintf("the data directory %s cannot be made: %v", dir, err)
	}
	free, err := freeBytes(dir)
	if err != nil {
		return err.Error()
	}
	if free < b.opts.MinFree {
		return fmt.Sprintf("the data directory %s has %s free, under the %s floor (--min-free); free some space there",
			dir, byteSize(free), byteSize(b.opts.MinFree))
	}
	if err := probeWrite(dir); err != nil {
		return fmt.Sprintf("the data directory %s cannot take writes: %v", dir, err)
	}
	return ""
}

// probeWrite writes, syncs and removes a small file in dir.
func probeWrite(dir string) error {
	path := filepath.Join(dir, probeName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(make([]byte, 4096))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	os.Remove(path)
	return err
}

// jetStreamReason starts the embedded JetStream again after the disk ran
// full, once the disk checks pass, and says why it cannot yet. A stream or
// consumer whose write failed for space keeps failing every write after it
// (the server keeps the first write error: publishes then get no answer),
// and a server may stop JetStream altogether ("JetStream out of resources,
// will be DISABLED"); both need JetStream restarted, which reloads every
// stream and consumer from its files.
func (b *Bus) jetStreamReason(diskOK bool) string {
	if b.srv == nil {
		return ""
	}
	broken := b.writeErrors()
	if broken == "" {
		return ""
	}
	store := filepath.Join(b.opts.DataDir, "nats")
	if !diskOK {
		return fmt.Sprintf("the queue store under %s failed a write (%s); it restarts once the disk takes writes", store, broken)
	}
	if since := time.Since(b.restarted); since < restartEvery {
		return fmt.Sprintf("the queue store under %s failed a write (%s); restarting it again in %s", store, broken, (restartEvery - since).Round(time.Second))
	}
	b.restarted = time.Now()
	b.log.Warn("the queue store failed a write; restarting the embedded JetStream", "errors", broken)
	if b.srv.JetStreamEnabled() {
		if err := b.srv.ShutdownJetStream(); err != nil {
			return fmt.Sprintf("the queue store under %s failed a write (%s) and stopping it failed: %v", store, broken, err)
		}
	}
	cfg := b.jsConfig
	if err := b.srv.EnableJetStream(&cfg); err != nil {
		return fmt.Sprintf("the queue store under %s failed a write (%s) and does not start again: %v", store, broken, err)
	}
	if still := b.writeErrors(); still != "" {
		return fmt.Sprintf("the queue store under %s still fails after a restart: %s", store, still)
	}
	b.log.Info("the embedded JetStream runs again")
	return ""
}

// restartEvery bounds how often jetStreamReason restarts JetStream.
const restartEvery = 10 * time.Second

// writeErrors lists the embedded JetStream's failed writes ("" when none):
// a stopped JetStream, or streams and consumers holding a write error.
func (b *Bus) writeErrors() string {
	if !b.srv.JetStreamEnabled() {
		return "JetStream stopped"
	}
	h := b.srv.Healthz(&server.HealthzOptions{Details: true})
	var out []string
	for _, e := range h.Errors {
		if strings.Contains(e.Error, "write error") {
			out = append(out, e.Error)
		}
	}
	return strings.Join(out, "; ")
}

// limitsReason reports the first stream that refuses new writes when full
// and is nearly full.
func (b *Bus) limitsReason(ctx context.Context) string {
	for _, s := range []struct{ name, why string }{
		{EventsStream, "the Parquet sink has not written them yet (is it failing? see its log lines); new work waits until it catches up"},
		{"KV_" + BatchBucket, "results are kept --result-ttl"},
	} {
		st, err := b.js.Stream(ctx, s.name)
		if err != nil {
			continue // unanswered: the other checks and the writes themselves tell
		}
		info := st.CachedInfo()
		limit := info.Config.MaxBytes
		if limit > 0 && float64(info.State.Bytes) >= fullAt*float64(limit) {
			return fmt.Sprintf("%s holds %s of its %s limit: %s", s.name, byteSize(int64(info.State.Bytes)), byteSize(limit), s.why)
		}
	}
	return ""
}

// byteSize writes n bytes for a person: 1.5 MiB.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
