package bus

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxQueuedJobs = 10000
	// A running job is kept alive with InProgress every AckWait/2, however
	// long it runs, so AckWait only decides how soon the jobs of a crashed
	// worker run again: a minute after a kill -9, not ten.
	DefaultJobAckWait = time.Minute
	DefaultMaxDeliver = 3
	DefaultNakDelay   = time.Second
	// DefaultJobRecheck: an idle worker asks each of its queues once per
	// this, for the jobs no wake-up announced (wake.go).
	DefaultJobRecheck   = 5 * time.Second
	DefaultCacheTTL     = 24 * time.Hour
	DefaultResultTTL    = 24 * time.Hour
	DefaultDedupWindow  = 2 * time.Minute
	DefaultEventAckWait = 20 * time.Second // the sink keeps a batch alive every 10 s while it writes
	DefaultReadyTimeout = 10 * time.Second
	// DefaultMinFree is the free space under which the data directory is
	// called full (storage.go): writes are refused with 507 before the
	// disk, and with it the store, actually runs out.
	DefaultMinFree = 128 << 20
)

// Options configure Open. Zero values take the defaults above.
type Options struct {
	// DataDir holds the embedded server's file store (DataDir/nats); with an
	// external server it is only watched for space (MinFree).
	// Required when URL is empty.
	DataDir string
	// URL of an external NATS server or cluster (comma-separated list).
	// Empty: start an embedded server.
	URL string
	// Listen (embedded server only): also accept connections on this
	// host:port, so that workers on other hosts can join. Empty: in-process
	// connections only, no port.
	Listen string
	// Token authenticates NATS connections: the embedded server requires it
	// of every client when set, and this process sends it. Listening beyond
	// loopback requires one.
	Token string
	// CredsFile: a NATS credentials file (user JWT and nkey seed) to connect
	// to an external server with.
	CredsFile string
	// CAFile: PEM root certificates to verify an external server's TLS with
	// (a tls:// URL verifies against the system's roots without it).
	CAFile string
	// Replicas of every stream and bucket; 0: three on a cluster of three or
	// more servers, else one.
	Replicas int

	// MaxQueuedJobs bounds the JOBS stream (queued plus in flight); past it
	// PublishJob returns ErrQueueFull.
	MaxQueuedJobs int64
	// JobAckWait: how long a delivered job may go without ack or progress
	// before it is redelivered to another worker.
	JobAckWait time.Duration
	// MaxDeliver: deliveries of one job before it is given up.
	MaxDeliver int
	// NakDelay: how long a failed job or event batch waits before redelivery.
	NakDelay time.Duration
	// JobRecheck: how often a worker with a free slot looks in every queue
	// though no wake-up came (wake.go): the longest a job whose wake-up was
	// lost, or one redelivered after JobAckWait, waits for a free slot.
	JobRecheck time.Duration

	// CacheTTL: lifetime of a result-cache entry.
	CacheTTL time.Duration
	// ResultTTL: how long a batch's record and results stay readable
	// (GET /v1/batches/{id}) after they are written.
	ResultTTL time.Duration
	// DedupWindow: publishes with the same id within it are stored once.
	DedupWindow time.Duration
	// EventAckWait: how long a delivered event batch may go unacked (the
	// sink keeps it alive while it writes).
	EventAckWait time.Duration
	// EventMaxAge: how long EVENTS keeps an event the Parquet sink has not
	// written. 0 (the default): until it is written, however long the sink
	// is down; EVENTS drops an event once the sink has acked it (interest
	// retention), so only unlogged events age. A positive value trades
	// those for disk, and Open warns.
	EventMaxAge time.Duration

	// Limits bound each stream's and bucket's bytes (limits.go).
	Limits Limits
	// Join keeps the streams and buckets that exist as they are, creating
	// only missing ones: a worker joining a gateway's server must not reset
	// the limits the gateway was started with (--max-queued, the retention
	// flags) to its own defaults.
	Join bool
	// MinFree: below this much free space in DataDir the store is called
	// full and writes are refused (storage.go); 0: DefaultMinFree. Checked
	// whenever DataDir is set: with an external server it holds no store
	// but still serve's Parquet log (an external server's disks are its own).
	MinFree int64

	// ReadyTimeout bounds the wait for the embedded server and the connect.
	ReadyTimeout time.Duration
}

// Validate reports the first invalid field. Zero values are valid (defaults).
func (o Options) Validate() error {
	if o.URL == "" && o.DataDir == "" {
		return errors.New("bus: DataDir is required for the embedded server")
	}
	if o.URL != "" {
		for _, u := range strings.Split(o.URL, ",") {
			p, err := url.Parse(strings.TrimSpace(u))
			if err != nil || p.Host == "" {
				return fmt.Errorf("bus: invalid NATS URL %q", u)
			}
		}
	}
	if o.Listen != "" {
		if o.URL != "" {
			return errors.New("bus: Listen is for the embedded server; with an external URL the cluster listens")
		}
		host, port, err := net.SplitHostPort(o.Listen)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return fmt.Errorf("bus: Listen %q: want HOST:PORT", o.Listen)
		}
		if o.Token == "" && !IsLoopback(host) {
			// Anyone who reaches the port could queue jobs or forge results.
			return fmt.Errorf("bus: listening on %s beyond loopback needs a token", o.Listen)
		}
	}
	if (o.CredsFile != "" || o.CAFile != "") && o.URL == "" {
		return errors.New("bus: CredsFile and CAFile are for an external URL")
	}
	durations := []struct {
		name string
		d    time.Duration
	}{
		{"JobAckWait", o.JobAckWait},
		{"NakDelay", o.NakDelay},
		{"JobRecheck", o.JobRecheck},
		{"CacheTTL", o.CacheTTL},
		{"ResultTTL", o.ResultTTL},
		{"DedupWindow", o.DedupWindow},
		{"EventAckWait", o.EventAckWait},
		{"EventMaxAge", o.EventMaxAge},
		{"ReadyTimeout", o.ReadyTimeout},
	}
	for _, d := range durations {
		if d.d < 0 {
			return fmt.Errorf("bus: %s must not be negative, got %s", d.name, d.d)
		}
	}
	if o.MaxQueuedJobs < 0 {
		return fmt.Errorf("bus: MaxQueuedJobs must not be negative, got %d", o.MaxQueuedJobs)
	}
	if err := o.Limits.validate(); err != nil {
		return err
	}
	if o.MinFree < 0 {
		return fmt.Errorf("bus: MinFree must not be negative, got %d", o.MinFree)
	}
	if o.Replicas < 0 || o.Replicas > 5 {
		return fmt.Errorf("bus: Replicas must be 0 (automatic) to 5, got %d", o.Replicas)
	}
	if o.MaxDeliver < 0 {
		return fmt.Errorf("bus: MaxDeliver must not be negative, got %d", o.MaxDeliver)
	}
	if o.JobAckWait != 0 && o.JobAckWait < time.Second {
		// InProgress fires at AckWait/2; below a second the keepalive
		// traffic is pointless and redeliveries race the handler.
		return fmt.Errorf("bus: JobAckWait must be at least 1s, got %s", o.JobAckWait)
	}
	return nil
}

// withDefaults fills zero values.
func (o Options) withDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.MaxQueuedJobs == 0 {
		o.MaxQueuedJobs = DefaultMaxQueuedJobs
	}
	if o.MaxDeliver == 0 {
		o.MaxDeliver = DefaultMaxDeliver
	}
	if o.MinFree == 0 {
		o.MinFree = DefaultMinFree
	}
	set(&o.JobAckWait, DefaultJobAckWait)
	set(&o.NakDelay, DefaultNakDelay)
	set(&o.JobRecheck, DefaultJobRecheck)
	set(&o.CacheTTL, DefaultCacheTTL)
	set(&o.ResultTTL, DefaultResultTTL)
	set(&o.DedupWindow, DefaultDedupWindow)
	set(&o.EventAckWait, DefaultEventAckWait)
	set(&o.ReadyTimeout, DefaultReadyTimeout)
	return o
}

// IsLoopback reports whether addr (HOST:PORT or a bare host) names only this
// machine: localhost or a loopback IP. A listener elsewhere needs a credential
// (a NATS token here; an API key in the gateway).
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
