package bus

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Limits bound the bytes each stream and bucket keeps, so that the store
// cannot grow until the disk is full. A zero field takes its share of Store;
// Store zero is, for the embedded server, three quarters of what the data
// directory's file system can give the store at start (its free space plus
// what the store already holds), and DefaultExternalStore on an external
// server (whose disks this process cannot see).
//
// What a full stream or bucket does is chosen per store (docs/operations.md,
// "Retention"):
// EVENTS, JOBS and the batches bucket refuse new writes (the gateway answers
// 507 or 429), because what they hold is not logged or not answered yet; the
// result cache drops its oldest entries, which costs a rerun, not data.
type Limits struct {
	Store   int64 // the budget the defaults are shares of
	Events  int64 // EVENTS: events the Parquet sink has not written yet
	Jobs    int64 // JOBS: queued and running jobs
	Results int64 // the batches bucket: batch records and results
	Cache   int64 // the result cache
	Buckets int64 // each other bucket: inflight, requests, and the named ones (tasks, episodes, searches)
}

// DefaultExternalStore is Limits.Store on an external server: each of its
// nodes must be able to reserve it.
const DefaultExternalStore = 4 << 30

// Shares of Limits.Store, in percent. Workers take a fixed small bucket.
// Their sum with six buckets of BucketsShare stays under 100, so the
// reservations fit the budget.
const (
	eventsShare  = 30
	jobsShare    = 10
	resultsShare = 20
	cacheShare   = 10
	bucketsShare = 3
	workersBytes = 1 << 20
)

// minStreamBytes is the least a stream or bucket may be given: below it a
// single large result would not fit.
const minStreamBytes = 64 << 10

func (l Limits) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"Store", l.Store}, {"Events", l.Events}, {"Jobs", l.Jobs}, {"Results", l.Results}, {"Cache", l.Cache}, {"Buckets", l.Buckets}} {
		if f.v != 0 && f.v < minStreamBytes {
			return fmt.Errorf("bus: Limits.%s must be 0 (default) or at least %d bytes, got %d", f.name, minStreamBytes, f.v)
		}
	}
	return nil
}

// withDefaults fills the zero fields from store (the budget when Store is 0).
func (l Limits) withDefaults(store int64) Limits {
	if l.Store == 0 {
		l.Store = store
	}
	share := func(v *int64, pct int64) {
		if *v == 0 {
			*v = max(l.Store/100*pct, minStreamBytes)
		}
	}
	share(&l.Events, eventsShare)
	share(&l.Jobs, jobsShare)
	share(&l.Results, resultsShare)
	share(&l.Cache, cacheShare)
	share(&l.Buckets, bucketsShare)
	return l
}

// embeddedStore is the embedded server's store budget: three quarters of
// the free space of dir's file system plus what dir/nats already holds (so a
// restart on a fuller disk does not shrink the budget below what is stored:
// the server would refuse every write).
func embeddedStore(dir string) (int64, error) {
	free, err := freeBytes(dir)
	if err != nil {
		return 0, err
	}
	used := dirBytes(filepath.Join(dir, "nats"))
	return (free + used) / 4 * 3, nil
}

// freeBytes is what an unprivileged writer can still write under dir.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("bus: free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// dirBytes sums the sizes of the files under dir (0 when it does not exist).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
