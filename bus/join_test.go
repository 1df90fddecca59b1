package bus

import (
	"testing"
)

// A worker joining a gateway's server (Join) keeps the limits the gateway
// set; one without Join would reset them to its own defaults.
func TestJoinKeepsTheGatewaysLimits(t *testing.T) {
	gw := startTestBus(t, Options{Listen: "127.0.0.1:0", MaxQueuedJobs: 5, Limits: Limits{Events: 1 << 20}})
	url := "nats://" + gw.ListenAddr()
	startTestBus(t, Options{URL: url, Join: true})
	limits := func() (int64, int64) {
		jobs, err := gw.js.Stream(t.Context(), JobsStream)
		if err != nil {
			t.Fatal(err)
		}
		events, err := gw.js.Stream(t.Context(), EventsStream)
		if err != nil {
			t.Fatal(err)
		}
		return jobs.CachedInfo().Config.MaxMsgs, events.CachedInfo().Config.MaxBytes
	}
	if msgs, bytes := limits(); msgs != 5 || bytes != 1<<20 {
		t.Fatalf("after a joining worker: JOBS MaxMsgs %d, EVENTS MaxBytes %d; want 5 and 1 MiB", msgs, bytes)
	}
	startTestBus(t, Options{URL: url})
	if msgs, _ := limits(); msgs != DefaultMaxQueuedJobs {
		t.Fatalf("without Join: JOBS MaxMsgs %d, want the defaults (%d) that Open without Join sets", msgs, DefaultMaxQueuedJobs)
	}
}
