package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Stream and bucket names. Subjects under them are the caller's choice
// (jobs.gpu, events.evaluation, ...).
const (
	JobsStream     = "JOBS"
	EventsStream   = "EVENTS"
	CacheBucket    = "cache"    // sha256(work, environment) -> verdict
	BatchBucket    = "batches"  // batch records and their results (results.go)
	InflightBucket = "inflight" // evaluations in flight and who waits for them (inflight.go)
	RequestBucket  = "requests" // a client's idempotency key -> the batch its request made (requests.go)
	WorkersBucket  = "workers"  // worker id -> its announcement, while it runs (workers.go)
)

// Bus is a connection to NATS JetStream with the kernelgate streams set up.
// It is safe for concurrent use.
type Bus struct {
	opts Options
	log  *slog.Logger

	srv       *server.Server // nil with an external URL
	nc        *nats.Conn
	js        jetstream.JetStream
	jobs      jetstream.Stream
	kv        jetstream.KeyValue // the result cache
	batches   jetstream.KeyValue
	inflight  *Bucket
	requests  *Bucket
	workers   *Bucket
	dirLock   *os.File               // the data directory's lock (embedded store only)
	replicas  int                    // of every stream and bucket (Options.Replicas, or what the server is)
	limits    Limits                 // Options.Limits with the defaults filled in
	jsConfig  server.JetStreamConfig // the embedded JetStream's, to start it again (storage.go)
	store     storage                // whether the store takes writes (storage.go)
	damage    *damageLog             // what the embedded server reported damaged (damage.go); nil with an external URL
	aside     *aside                 // damaged streams read before the server opened them, until salvaged (salvage.go)
	salvaged  []Salvage              // what was put back into them; set by Open only
	restarted time.Time              // when the watcher last restarted JetStream (storage.go)
	stopWatch chan struct{}          // closed by Close: the storage watcher stops

	wakersMu sync.Mutex
	wakers   map[*waiter]struct{} // the job loops listening for wake-ups (wake.go)

	closeOnce sync.Once
	closed    chan struct{} // closed by the nats ClosedHandler
}

// Open connects to NATS (starting an embedded server when opts.URL is empty)
// and creates or updates the JOBS and EVENTS streams and the cache, batches
// inflight and requests buckets.
func Open(ctx context.Context, opts Options, log *slog.Logger) (*Bus, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bus{opts: opts, log: log.With("component", "bus"), closed: make(chan struct{}), stopWatch: make(chan struct{})}
	if err := b.connect(ctx); err != nil {
		b.Close()
		return nil, err
	}
	// A cluster that has just formed may not answer stream creation yet
	// (no leader for a new stream's group): try again for a while. The
	// embedded server answers at once or not at all.
	setup := func() error { return b.setup(ctx) }
	var err error
	if b.srv != nil {
		err = setup()
	} else {
		err = b.retryFor(ctx, "bus.setup", setupRetry, unsettled(ctx), setup)
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	b.checkStorage() // readiness is right from the start
	go b.watchStorage(b.stopWatch)
	return b, nil
}

// setupRetry bounds how long Open waits for an external server to answer
// the streams' and buckets' creation.
const setupRetry = 30 * time.Second

// jsErrNoPeers is the server's "no suitable peers for placement" (a node of a
// cluster that has just formed not yet known online: a replicated stream
// cannot be placed); nats.go has no constant. Seen once in CI starting
// `serve` on a 3-node cluster whose nodes all said healthy.
const jsErrNoPeers jetstream.ErrorCode = 10005

func (b *Bus) connect(ctx context.Context) error {
	copts := []nats.Option{
		nats.Name("kernelgate"),
		nats.DrainTimeout(10 * time.Second),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.log.Warn("disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			b.log.Info("reconnected", "url", nc.ConnectedUrl())
			b.rouse() // wake-ups sent meanwhile are lost
		}),
	}
	timeout := b.opts.ReadyTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d)
	}
	url := b.opts.URL
	if url == "" {
		lock, err := lockDataDir(b.opts.DataDir)
		if err != nil {
			return err
		}
		b.dirLock = lock
		budget, err := embeddedStore(b.opts.DataDir)
		if err != nil {
			return err
		}
		b.limits = b.opts.Limits.withDefaults(budget)
		b.damage = &damageLog{dir: filepath.Join(b.opts.DataDir, "nats")}
		b.aside = setAside(filepath.Join(b.opts.DataDir, "nats"), b.damage, b.log)
		srv, err := startEmbedded(b.opts, b.limits.Store, b.damage, b.log, timeout)
		if err != nil {
			return err
		}
		if err := refuseDamaged(b.damage); err != nil {
			srv.Shutdown()
			srv.WaitForShutdown()
			return err
		}
		b.srv = srv
		b.jsConfig = *srv.JetStreamConfig()
		// EnableJetStream appends "jetstream" to the directory it is given.
		b.jsConfig.StoreDir = filepath.Join(b.opts.DataDir, "nats")
		copts = append(copts, nats.InProcessServer(srv))
	} else {
		b.limits = b.opts.Limits.withDefaults(DefaultExternalStore)
		// An external cluster may restart under us: keep reconnecting
		// rather than failing every publish after a blip.
		copts = append(copts, nats.Timeout(timeout), nats.MaxReconnects(-1))
		if b.opts.CredsFile != "" {
			copts = append(copts, nats.UserCredentials(b.opts.CredsFile))
		}
		if b.opts.CAFile != "" {
			copts = append(copts, nats.RootCAs(b.opts.CAFile))
		}
	}
	if b.opts.Token != "" {
		copts = append(copts, nats.Token(b.opts.Token))
	}
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		return fmt.Errorf("bus.connect: %w", err)
	}
	b.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("bus.connect: jetstream: %w", err)
	}
	b.js = js
	b.replicas = b.opts.Replicas
	if b.replicas == 0 {
		b.replicas = 1
		// A clustered server: every stream and bucket on three nodes, so that
		// losing one loses nothing acknowledged.
		if nc.ConnectedClusterName() != "" && len(nc.Servers()) >= 3 {
			b.replicas = 3
		}
	}
	if b.srv != nil {
		b.log.Info("connected", "embedded", true, "store", filepath.Join(b.opts.DataDir, "nats"))
	} else {
		b.log.Info("connected", "embedded", false, "url", nc.ConnectedUrlRedacted(), "replicas", b.replicas)
	}
	return nil
}

func startEmbedded(o Options, maxStore int64, damage *damageLog, log *slog.Logger, timeout time.Duration) (*server.Server, error) {
	sopts := &server.Options{
		ServerName: "kernelgate",
		JetStream:  true,
		StoreDir:   filepath.Join(o.DataDir, "nats"),
		// Set, not left to the server: it would take 75% of the space free
		// at start, which after a restart on a fuller disk can be less than
		// the store already holds, and then it refuses every write.
		JetStreamMaxStore: maxStore,
		// In-process connections only, unless told to listen: nothing
		// outside the process can reach the queue, and there is no port to
		// collide with.
		DontListen:    o.Listen == "",
		NoSigs:        true,
		Authorization: o.Token,
	}
	if o.Listen != "" {
		host, port, _ := net.SplitHostPort(o.Listen) // Validate checked it
		sopts.Host, sopts.Port = host, server.RANDOM_PORT
		if n, _ := strconv.Atoi(port); n > 0 {
			sopts.Port = n
		}
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("bus.embedded: %w", err)
	}
	srv.SetLogger(serverLogger{log: log.With("component", "nats-server"), damage: damage}, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(timeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		if o.Listen != "" {
			return nil, fmt.Errorf("bus.embedded: server not ready after %s (store %s; is %s free?)", timeout, sopts.StoreDir, o.Listen)
		}
		return nil, fmt.Errorf("bus.embedded: server not ready after %s (store %s)", timeout, sopts.StoreDir)
	}
	return srv, nil
}

// Close drains the connection (in-flight acks and publishes are flushed) and
// shuts the embedded server down. Safe to call more than once.
func (b *Bus) Close() {
	b.closeOnce.Do(func() {
		close(b.stopWatch)
		if b.nc != nil {
			if err := b.nc.Drain(); err != nil {
				b.nc.Close()
			}
			select {
			case <-b.closed:
			case <-time.After(15 * time.Second): // DrainTimeout plus slack
				b.log.Warn("close: drain did not finish")
				b.nc.Close()
			}
		}
		if b.srv != nil {
			b.srv.Shutdown()
			b.srv.WaitForShutdown()
		}
		if b.dirLock != nil {
			b.dirLock.Close() // the store is closed: another process may open it
		}
	})
}

// isClosed reports whether the connection is gone for good.
func (b *Bus) isClosed() bool {
	return b.nc.IsClosed() || b.nc.IsDraining()
}

var errClosed = errors.New("bus: closed")

// ListenAddr is the embedded server's client address when it listens
// (Options.Listen; port 0 picks one), else "".
func (b *Bus) ListenAddr() string {
	if b.srv == nil || b.opts.Listen == "" {
		return ""
	}
	if a, ok := b.srv.Addr().(*net.TCPAddr); ok {
		return a.String()
	}
	return ""
}

// serverLogger routes the embedded server's log lines to slog, and those
// that report a damaged store to damage (damage.go).
type serverLogger struct {
	log    *slog.Logger
	damage *damageLog
}

func (l serverLogger) Noticef(f string, v ...any) { l.log.Debug(fmt.Sprintf(f, v...)) }
func (l serverLogger) Warnf(f string, v ...any)   { l.problem(slog.LevelWarn, fmt.Sprintf(f, v...)) }
func (l serverLogger) Fatalf(f string, v ...any)  { l.problem(slog.LevelError, fmt.Sprintf(f, v...)) }
func (l serverLogger) Errorf(f string, v ...any)  { l.problem(slog.LevelError, fmt.Sprintf(f, v...)) }

func (l serverLogger) problem(level slog.Level, line string) {
	if l.damage == nil {
		l.log.Log(context.Background(), level, line)
		return
	}
	if d := l.damage.note(line); d != nil {
		l.log.Error("the queue store is damaged", "store", d.Store, "what", d.Reason, "server", line)
		return
	}
	l.log.Log(context.Background(), level, line)
}
func (l serverLogger) Debugf(f string, v ...any) { l.log.Debug(fmt.Sprintf(f, v...)) }
func (l serverLogger) Tracef(f string, v ...any) { l.log.Debug(fmt.Sprintf(f, v...)) }
