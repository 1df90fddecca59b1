package export

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// Every event type travels on its table's subject under its own id, and a
// repeated publish of one event is one message.
func TestPublishRoutesEachEventToItsTable(t *testing.T) {
	b := startBus(t)
	events := []event.Event{
		event.Evaluation{EventID: "e1"}, event.EpisodeStep{EventID: "ep1"}, event.SearchStep{EventID: "st1"},
		event.Search{EventID: "s1"}, SkillEvent{EventID: "k1"}, event.LLMCall{EventID: "c1"},
	}
	want := map[string]string{}
	for _, ev := range events {
		for range 2 {
			if err := event.Publish(t.Context(), b, ev); err != nil {
				t.Fatal(err)
			}
		}
		want[ev.EventKey()] = ev.EventSubject()
	}
	var mu sync.Mutex
	got := map[string]string{}
	n := 0
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- b.Events(ctx, "probe", 10, 100*time.Millisecond, func(_ context.Context, evs []bus.Event) error {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range evs {
				got[e.ID] = e.Subject
				n++
			}
			return nil
		})
	}()
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < len(want) {
			return context.DeadlineExceeded
		}
		return nil
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if n != len(events) {
		t.Errorf("%d messages for %d events published twice each: the id does not dedup", n, len(events))
	}
	for id, subject := range want {
		if got[id] != subject {
			t.Errorf("event %s on %q, want %q", id, got[id], subject)
		}
	}
}
