package bus

import (
	"strings"
	"testing"
)

func TestDamageLines(t *testing.T) {
	for _, c := range []struct {
		line  string
		store string
		fatal bool
		none  bool
	}{
		{line: `Filestore [KV_batches] indexCacheBuf corrupt record state in /d/nats/jetstream/$G/streams/KV_batches/msgs/1.blk: dlen 2147483625`, store: "KV_batches"},
		{line: `  Stream metafile "/d/nats/jetstream/$G/streams/JOBS/meta.inf": checksums do not match "a" vs "b"`, store: "JOBS", fatal: true},
		{line: `  Error unmarshalling stream metafile "/d/nats/jetstream/$G/streams/EVENTS/meta.inf": invalid character`, store: "EVENTS", fatal: true},
		{line: `    Missing consumer checksum for "/d/nats/jetstream/$G/streams/EVENTS/obs/parquet-sink/meta.sum"`, store: "EVENTS"},
		{line: `JetStream resource limits exceeded for server`, none: true},
	} {
		d := (&damageLog{dir: "/d/nats"}).note(c.line)
		switch {
		case c.none && d != nil:
			t.Errorf("%q: damage %+v, want none", c.line, d)
		case c.none:
		case d == nil:
			t.Errorf("%q: no damage noted", c.line)
		case d.Store != c.store || d.Fatal != c.fatal || !strings.Contains(d.Reason, c.store):
			t.Errorf("%q: %+v, want store %s fatal %v and a reason naming it", c.line, d, c.store, c.fatal)
		}
	}
	err := refuseDamaged(&damageLog{dir: "/d/nats", seen: []Damage{{Store: "JOBS", Fatal: true, Reason: "JOBS could not be loaded", Line: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "JOBS could not be loaded") {
		t.Fatalf("refuseDamaged = %v", err)
	}
}
