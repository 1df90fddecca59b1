package dispatch

import (
	"testing"

	"github.com/kernelgate/kernelgate/bus"
)

// The first Lanes keys get a lane each and keep it; the next shares the
// lane its name hashes to; no key is lane 0.
func TestKeysTakeLanesOfTheirOwn(t *testing.T) {
	s := &Service{Bus: startBus(t, bus.Options{}), Log: testLogger()}
	ctx := t.Context()
	if l := s.lane(ctx, ""); l != 0 {
		t.Fatalf("no key: lane %d, want 0", l)
	}
	seen := map[int]string{}
	for _, c := range []string{"alice", "bob", "carol", "dave"} {
		l := s.lane(ctx, c)
		if other, ok := seen[l]; ok {
			t.Fatalf("%s got lane %d, which %s holds", c, l, other)
		}
		seen[l] = c
		if again := s.lane(ctx, c); again != l {
			t.Fatalf("%s: lane %d, then %d", c, l, again)
		}
	}
	if l := s.lane(ctx, "erin"); l != homeLane("erin") {
		t.Fatalf("a fifth key got lane %d, want its home lane %d", l, homeLane("erin"))
	}
	// Another gateway on the same bus sees the same holders.
	other := &Service{Bus: s.Bus, Log: testLogger()}
	for l, c := range seen {
		if got := other.lane(ctx, c); got != l {
			t.Fatalf("another gateway put %s on lane %d, want %d", c, got, l)
		}
	}
}
