package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StoreReport is what Verify found in one stream or bucket.
type StoreReport struct {
	Name     string   `json:"name"` // a stream, or KV_<bucket>
	Messages uint64   `json:"messages"`
	Bytes    uint64   `json:"bytes"`
	Problems []string `json:"problems,omitempty"`
}

// ErrNoStore: the data directory holds no queue store.
var ErrNoStore = errors.New("no queue store")

// Verify checks the embedded store under dataDir offline: it takes the data
// directory's lock (a running serve is an error: stop it first), starts the
// server on the store without creating or changing any stream, and reports
// every stream and bucket with the damage the server found loading it (the
// same repair serve's start would make happens here), whether the server
// calls it healthy, and whether every bucket's keys read back within
// storeReadTimeout. Problems not tied to one stream come under Name "".
func Verify(ctx context.Context, dataDir string, log *slog.Logger) ([]StoreReport, error) {
	store := filepath.Join(dataDir, "nats")
	if fi, err := os.Stat(store); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("bus.Verify: %w under %s (no nats/ directory: is it serve's --data?)", ErrNoStore, dataDir)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	damage := &damageLog{dir: store}
	// MaxStore: what the store holds plus room, so that its reservations load.
	srv, err := startEmbedded(Options{DataDir: dataDir}, max(dirBytes(store)*2, 1<<30), damage, log, DefaultReadyTimeout)
	if err != nil {
		return nil, err
	}
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	nc, err := nats.Connect("", nats.InProcessServer(srv))
	if err != nil {
		return nil, fmt.Errorf("bus.Verify: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus.Verify: %w", err)
	}
	var out []StoreReport
	byName := map[string]int{}
	l := js.ListStreams(ctx)
	for si := range l.Info() {
		r := StoreReport{Name: si.Config.Name, Messages: si.State.Msgs, Bytes: si.State.Bytes}
		if strings.HasPrefix(r.Name, "KV_") {
			if err := readBucket(ctx, js, strings.TrimPrefix(r.Name, "KV_")); err != nil {
				r.Problems = append(r.Problems, err.Error())
			}
		}
		if lost := si.State.Lost; lost != nil && len(lost.Msgs) > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d messages lost (%d bytes)", len(lost.Msgs), lost.Bytes))
		}
		byName[r.Name] = len(out)
		out = append(out, r)
	}
	if err := l.Err(); err != nil {
		return out, fmt.Errorf("bus.Verify: listing streams: %w", err)
	}
	add := func(name, problem string) {
		i, ok := byName[name]
		if !ok {
			i, byName[name] = len(out), len(out)
			out = append(out, StoreReport{Name: name})
		}
		out[i].Problems = append(out[i].Problems, problem)
	}
	for _, dm := range damage.all() {
		add(dm.Store, dm.Reason+" (server: "+dm.Line+")")
	}
	for _, e := range srv.Healthz(&server.HealthzOptions{Details: true}).Errors {
		add(e.Stream, e.Error)
	}
	return out, nil
}

// readBucket reads every key of bucket, bounded like every read.
func readBucket(ctx context.Context, js jetstream.JetStream, bucket string) error {
	rctx, cancel := context.WithTimeout(ctx, storeReadTimeout)
	defer cancel()
	kv, err := js.KeyValue(rctx, bucket)
	if err != nil {
		return fmt.Errorf("opening the bucket: %w", err)
	}
	if _, err := entries(rctx, kv, ">"); err != nil {
		return fmt.Errorf("reading its keys: %w", err)
	}
	return nil
}
