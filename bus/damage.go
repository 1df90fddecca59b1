package bus

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// A damaged file in the embedded store (a bad disk block, a torn copy) shows
// only in the server's log lines: the server drops a block's records from the
// first bad one on and starts all the same, or leaves out a stream whose
// metadata it cannot read. serve then went on as if nothing happened (later
// results answered 404). The bus reads those lines instead: a stream it
// cannot load stops Open with the store's name, what it holds and the fix;
// records dropped from a block are logged as an error naming the same, and
// `kernelgate doctor --data DIR` lists both.

// Damage is one problem the embedded server reported with its store.
type Damage struct {
	Store  string // stream name (KV_<bucket> for a bucket); "" when the line names none
	Line   string // the server's words
	Fatal  bool   // the stream was not loaded: serving would recreate it empty
	Reason string // what it means and what to do, for an operator
	Blocks bool   // found reading the blocks before the server opened them: Line is kernelgate's words
}

// damageLog collects the server's damage lines.
type damageLog struct {
	mu   sync.Mutex
	dir  string // the store's directory, for the fix
	seen []Damage
}

var (
	reFilestore = regexp.MustCompile(`Filestore \[([^\]]+)\]`)
	reStreamDir = regexp.MustCompile(`streams/([^/"]+)/`)
	reRecreate  = regexp.MustCompile(`recreating stream "([^"]+)"`)
)

// note records line when it reports damage, and returns it (nil when not).
func (d *damageLog) note(line string) *Damage {
	lower := strings.ToLower(line)
	stream := ""
	if m := reFilestore.FindStringSubmatch(line); m != nil {
		stream = m[1]
	} else if m := reRecreate.FindStringSubmatch(line); m != nil {
		stream = m[1]
	} else if m := reStreamDir.FindStringSubmatch(line); m != nil {
		stream = m[1]
	}
	meta := strings.Contains(lower, "metafile") || strings.Contains(lower, "checksum")
	consumer := strings.Contains(lower, "consumer")
	// A stream whose metadata does not load is left out: fatal. A consumer's
	// is recreated by whoever reads (the sink, the workers), a block's bad
	// records are dropped: the store runs on, short of them.
	fatal := meta && !consumer || strings.Contains(lower, "error recreating stream")
	if !fatal && !(meta && consumer) && !strings.Contains(lower, "corrupt") && !strings.Contains(lower, "lost data") {
		return nil
	}
	dm := Damage{Store: stream, Line: line, Fatal: fatal, Reason: d.reason(stream, fatal)}
	d.mu.Lock()
	d.seen = append(d.seen, dm)
	d.mu.Unlock()
	return &dm
}

func (d *damageLog) all() []Damage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Damage(nil), d.seen...)
}

// holds says what each stream keeps, and so what its damage costs.
var holds = map[string]string{
	JobsStream:             "queued evaluations: a lost job leaves its batch running; resubmit such batches",
	EventsStream:           "events the Parquet sink had not written: their rows are missing from the log",
	"KV_" + BatchBucket:    "batch records and results (their verdicts are also in the Parquet log): lost ones answer 404",
	"KV_" + CacheBucket:    "the result cache: lost verdicts are evaluated again",
	"KV_" + InflightBucket: "identical evaluations in flight: a lost entry costs a second evaluation",
	"KV_" + RequestBucket:  "idempotency keys: a retried request whose key was lost runs again",
	"KV_" + WorkersBucket:  "worker announcements: workers announce themselves again within seconds",
}

func (d *damageLog) reason(stream string, fatal bool) string {
	what := holds[stream]
	if what == "" {
		what = "state kept by the gateway (tasks, episodes or searches registered over the API)"
	}
	if stream == "" {
		return "the store under " + d.dir + " is damaged; run `kernelgate doctor --data` on its data directory to see which stream"
	}
	dir := filepath.Join(d.dir, "jetstream", "$G", "streams", stream)
	if fatal {
		return fmt.Sprintf("%s could not be loaded (it holds %s). Restore %s from a backup, or move it aside to start with %s empty",
			stream, what, dir, stream)
	}
	return fmt.Sprintf("%s had damaged records (it holds %s). Opening the store copies %s aside under %s first and puts back every record it can read; the salvage counts say what was lost",
		stream, what, dir, filepath.Join(d.dir, DamagedDir))
}

// noteBlocks records the damaged blocks found before the server opened the
// store: rebuilding a stream from its blocks, the server cuts them short
// without a log line.
func (d *damageLog) noteBlocks(s streamScan, note string) {
	var at []string
	for _, bl := range s.Blocks {
		if bl.Unread != "" {
			at = append(at, fmt.Sprintf("%d.blk: %s", bl.Index, bl.Unread))
			continue
		}
		at = append(at, fmt.Sprintf("%d.blk: %d bad bytes from offset %d", bl.Index, bl.badBytes(), bl.FirstBad))
	}
	line := fmt.Sprintf("damaged blocks in %s (%s); %s", s.Name, strings.Join(at, ", "), note)
	d.mu.Lock()
	d.seen = append(d.seen, Damage{Store: s.Name, Line: line, Reason: d.reason(s.Name, false), Blocks: true})
	d.mu.Unlock()
}

// refuseDamaged is Open's answer to a stream the server could not load:
// setting the streams up would create it again, empty, over its files.
func refuseDamaged(d *damageLog) error {
	var fatal []string
	for _, dm := range d.all() {
		if dm.Fatal {
			fatal = append(fatal, dm.Reason+" (server: "+dm.Line+")")
		}
	}
	if len(fatal) == 0 {
		return nil
	}
	return fmt.Errorf("bus: the queue store under %s is damaged: %s; `kernelgate doctor --data` checks the rest", d.dir, strings.Join(fatal, "; "))
}

// Damage lists what the embedded server reported damaged in its store since
// Open (none with an external server).
func (b *Bus) Damage() []Damage {
	if b.damage == nil {
		return nil
	}
	return b.damage.all()
}
