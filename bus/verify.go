package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
	Salvage  *Salvage `json:"salvage,omitempty"` // its damaged blocks: what was read back and put back
}

// ErrNoStore: the data directory holds no queue store.
var ErrNoStore = errors.New("no queue store")

// Verify checks the embedded store under dataDir offline and changes none
// of its files: it takes the data directory's lock (a running serve is an
// error: stop it first), reads every block itself, then starts the server
// on a temporary copy of the store, without creating or changing any
// stream, so that the server's repair and the salvage Open would make
// happen on the copy. It reports every stream and bucket with the damage
// found, what the salvage read and would put back, whether the server
// calls it healthy, and whether every bucket's keys read back within
// storeReadTimeout. Problems not tied to one stream come under Name "".
func Verify(ctx context.Context, dataDir string, log *slog.Logger) ([]StoreReport, error) {
	return check(ctx, dataDir, false, log)
}

// Repair is Verify on the store itself, as Open does: damaged streams are
// copied aside under nats/.damaged, the server cuts their blocks at the
// damage, and every readable record it dropped is put back.
func Repair(ctx context.Context, dataDir string, log *slog.Logger) ([]StoreReport, error) {
	return check(ctx, dataDir, true, log)
}

func check(ctx context.Context, dataDir string, inPlace bool, log *slog.Logger) ([]StoreReport, error) {
	store := filepath.Join(dataDir, "nats")
	if fi, err := os.Stat(store); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("bus.Verify: %w under %s (no nats/ directory: is it serve's --data?)", ErrNoStore, dataDir)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := lockForCheck(dataDir, inPlace)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	damage := &damageLog{dir: store}
	runDir, done, a, err := prepareCheck(dataDir, inPlace, damage, log)
	if err != nil {
		return scanReports(damage), err
	}
	defer done()
	// MaxStore: what the store holds plus room, so that its reservations load.
	srv, err := startEmbedded(Options{DataDir: runDir}, max(dirBytes(store)*2, 1<<30), damage, log, DefaultReadyTimeout)
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
	salvaged := map[string]*Salvage{}
	if a != nil {
		for _, s := range a.streams {
			rep := restore(ctx, js, s)
			rep.DryRun = !inPlace
			if inPlace {
				rep.Copy = filepath.Join(a.root, s.Name)
			}
			logSalvage(log, rep)
			salvaged[s.Name] = &rep
		}
	}
	out, err := listStores(ctx, js, salvaged)
	if err != nil {
		return out, err
	}
	return addProblems(out, damage, srv), nil
}

// prepareCheck readies the store check runs on: the store itself with its
// damaged streams set aside, or a temporary copy of it (done removes it).
// A copy that cannot be made leaves the check to what the blocks say.
func prepareCheck(dataDir string, inPlace bool, damage *damageLog, log *slog.Logger) (string, func(), *aside, error) {
	store := filepath.Join(dataDir, "nats")
	if inPlace {
		return dataDir, func() {}, setAside(store, damage, log), nil
	}
	streams, err := scanStore(store)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bus.Verify: %w", err)
	}
	for _, s := range streams {
		damage.noteBlocks(s, "not copied: a check without --fix changes nothing")
	}
	tmp, err := tempStore(store)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bus.Verify: the server's own checks did not run: %w", err)
	}
	for i := range streams {
		rel, _ := filepath.Rel(store, streams[i].Dir)
		streams[i].Dir = filepath.Join(tmp, "nats", rel)
		forgetState(streams[i], log)
	}
	var a *aside
	if len(streams) > 0 {
		a = &aside{streams: streams}
	}
	return tmp, func() { os.RemoveAll(tmp) }, a, nil
}

// tempStore copies the store's JetStream directory to a new temporary data
// directory, after checking the space it needs.
func tempStore(store string) (string, error) {
	src := filepath.Join(store, "jetstream")
	need := dirBytes(src)
	if free, err := freeBytes(os.TempDir()); err == nil && free < need+need/10+(64<<20) {
		return "", fmt.Errorf("no room for a copy of the store in %s (%s free, %s needed; set TMPDIR to a larger disk)",
			os.TempDir(), byteSize(free), byteSize(need))
	}
	tmp, err := os.MkdirTemp("", "kernelgate-check-")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return tmp, nil
	}
	if err := os.CopyFS(filepath.Join(tmp, "nats", "jetstream"), os.DirFS(src)); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("copying the store to %s: %w", tmp, err)
	}
	return tmp, nil
}

// scanReports is what the blocks alone say, when the server could not run.
func scanReports(damage *damageLog) []StoreReport {
	var out []StoreReport
	for _, dm := range damage.all() {
		out = append(out, StoreReport{Name: dm.Store, Problems: []string{dm.Reason + " (" + dm.Line + ")"}})
	}
	return out
}

// listStores reports every stream and bucket the server loaded.
func listStores(ctx context.Context, js jetstream.JetStream, salvaged map[string]*Salvage) ([]StoreReport, error) {
	var out []StoreReport
	l := js.ListStreams(ctx)
	for si := range l.Info() {
		r := StoreReport{Name: si.Config.Name, Messages: si.State.Msgs, Bytes: si.State.Bytes, Salvage: salvaged[si.Config.Name]}
		if strings.HasPrefix(r.Name, "KV_") {
			if err := readBucket(ctx, js, strings.TrimPrefix(r.Name, "KV_")); err != nil {
				r.Problems = append(r.Problems, err.Error())
			}
		}
		if lost := si.State.Lost; lost != nil && len(lost.Msgs) > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%d messages lost (%d bytes)", len(lost.Msgs), lost.Bytes))
		}
		out = append(out, r)
	}
	if err := l.Err(); err != nil {
		return out, fmt.Errorf("bus.Verify: listing streams: %w", err)
	}
	return out, nil
}

// addProblems adds the damage noted and the server's health errors.
func addProblems(out []StoreReport, damage *damageLog, srv *server.Server) []StoreReport {
	byName := map[string]int{}
	for i, r := range out {
		byName[r.Name] = i
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
		if dm.Blocks {
			add(dm.Store, dm.Reason+" ("+dm.Line+")")
		} else {
			add(dm.Store, dm.Reason+" (server: "+dm.Line+")")
		}
	}
	for _, e := range srv.Healthz(&server.HealthzOptions{Details: true}).Errors {
		add(e.Stream, e.Error)
	}
	return out
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

// lockForCheck takes the data directory's lock: for writing to repair, or
// without writing a byte (the lock file names its holder) to check. A
// directory without a lock file was never served, so no one holds it.
func lockForCheck(dir string, write bool) (*os.File, error) {
	if write {
		return lockDataDir(dir)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: data directory lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("bus: data directory %s is in use by another kernelgate process (%s): stop it first",
				dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("bus: data directory lock: %w", err)
	}
	return f, nil
}
