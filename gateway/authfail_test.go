package gateway

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// randomSecret is a well-formed key that no keyring holds, starting with prefix.
func randomSecret(prefix string) string {
	var raw [40]byte
	_, _ = rand.Read(raw[:])
	body := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	return prefix + body[:len(apikey.Prefix)+52-len(prefix)]
}

// A guesser sends 10,000 wrong keys from the trainer's address, aimed at
// the trainer's key (its listed hint) or at random keys: past the limit
// the wrong keys get 429, and the trainer's valid key, interleaved with
// them from the same address, gets 200 every time.
func TestValidKeyNeverRefusedForOthersFailures(t *testing.T) {
	const wrong, every = 10_000, 100
	for _, tc := range []struct {
		name          string
		aimed         bool // every wrong key starts with the trainer's hint
		elsewhere429s bool // the same kind of guess from another address is refused
	}{
		{"one prefix", true, true},
		{"random prefixes", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, keys := keyFile(t, map[string]string{"trainer": "admin"})
			srv := New(Config{}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
			now := time.Unix(1_000_000, 0)
			srv.authFails.now = func() time.Time { return now }
			h := srv.Handler()
			hint := keys["trainer"][:credPrefixLen]
			guess := func() map[string]string {
				p := apikey.Prefix
				if tc.aimed {
					p = hint
				}
				return map[string]string{"Authorization": "Bearer " + randomSecret(p)}
			}
			good := map[string]string{"Authorization": "Bearer " + keys["trainer"]}
			const addr = "127.0.0.1:40000"
			wrongCodes, goodCodes := map[int]int{}, map[int]int{}
			start := time.Now()
			for i := range wrong {
				rec := knock(h, "GET", "/v1/gpus", addr, guess(), "")
				wrongCodes[rec.Code]++
				if i == DefaultAuthFailLimit {
					e := decodeError(t, rec)
					if rec.Code != 429 || e.Code != CodeRateLimited || !strings.Contains(e.Message, "unknown or revoked") ||
						rec.Header().Get("Retry-After") == "" {
						t.Fatalf("first past the limit: %d %v %s", rec.Code, rec.Header(), rec.Body)
					}
					checkSpec(t, "GET", "/v1/gpus", rec)
				}
				if i%every == every-1 {
					goodCodes[knock(h, "GET", "/v1/gpus", addr, good, "").Code]++
				}
			}
			t.Logf("%d wrong keys: %v; valid key: %v; %s", wrong, wrongCodes, goodCodes, time.Since(start).Round(time.Millisecond))
			if wrongCodes[401] != DefaultAuthFailLimit || wrongCodes[429] != wrong-DefaultAuthFailLimit {
				t.Errorf("wrong keys: %v, want %d × 401 then 429", wrongCodes, DefaultAuthFailLimit)
			}
			if goodCodes[200] != wrong/every {
				t.Errorf("valid key: %v, want %d × 200", goodCodes, wrong/every)
			}
			rec := knock(h, "GET", "/v1/gpus", "10.0.0.9:5000", guess(), "")
			if got := rec.Code == 429; got != tc.elsewhere429s {
				t.Errorf("the same guess from another address: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

// A failure counts for one window from when it happened, not until a
// window that started earlier ends.
func TestAuthFailsSlidingWindow(t *testing.T) {
	t0 := time.Unix(600, 0) // on a bucket boundary, so the figures below are exact
	now := t0
	a := newAuthFails(3, time.Minute, func() time.Time { return now })
	const addr = "10.0.0.7"
	at := func(d time.Duration) { now = t0.Add(d) }
	counted := func() int {
		s := a.addrs.counts[addrKey(addr)]
		s.advance(tickOf(now, time.Minute/failBuckets))
		return s.count()
	}
	steps := []struct {
		at      time.Duration
		wait    time.Duration // of a failure at that time
		reached bool
	}{
		{0, 0, false},
		{30 * time.Second, 0, false},
		{30 * time.Second, 0, true},                 // the third: the limit is reached
		{59 * time.Second, 31 * time.Second, false}, // past it until the two at 30 s slide out
	}
	for i, st := range steps {
		at(st.at)
		if v := a.fail(addr, ""); v.wait != st.wait || v.reached != st.reached {
			t.Fatalf("failure %d at %s: %+v, want wait %s, reached %v", i, st.at, v, st.wait, st.reached)
		}
	}
	for _, c := range []struct {
		at   time.Duration
		want int
	}{
		{59 * time.Second, 4},
		{60 * time.Second, 3}, // the one at 0 is a window old; a fixed window from 0 would hold none
		{89 * time.Second, 3},
		{90 * time.Second, 1},
		{113 * time.Second, 1},
		{114 * time.Second, 0}, // the one at 59 s left with its bucket (54-60 s): at most window/failBuckets early
	} {
		at(c.at)
		if got := counted(); got != c.want {
			t.Errorf("at %s: %d failures counted, want %d", c.at, got, c.want)
		}
	}
	at(90 * time.Second)
	if v := a.fail(addr, ""); v.wait != 0 {
		t.Errorf("below the limit again: %+v", v)
	}
}

// A request without a key is limited per address: past the limit it gets
// 429, another address still gets 401, and a valid key from the same
// address gets in.
func TestFailedAuthWithoutKeyIsPerAddress(t *testing.T) {
	f, keys := keyFile(t, map[string]string{"ops": "admin"})
	srv := New(Config{Doors: Doors{AuthFailLimit: 3, AuthFailWindow: time.Minute}}, Deps{Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	now := time.Unix(1_000_000, 0)
	srv.authFails.now = func() time.Time { return now }
	h := srv.Handler()
	good := map[string]string{"Authorization": "Bearer " + keys["ops"]}
	const failer, other = "10.0.0.7:5000", "10.0.0.8:5000"
	for i := range 3 {
		if rec := knock(h, "GET", "/v1/gpus", failer, nil, ""); rec.Code != 401 {
			t.Fatalf("failure %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	rec := knock(h, "GET", "/v1/gpus", failer, nil, "")
	e := decodeError(t, rec)
	if rec.Code != 429 || e.Code != CodeRateLimited || !strings.Contains(e.Message, "from 10.0.0.7") ||
		!strings.Contains(e.Message, "Authorization: Bearer") || rec.Header().Get("Retry-After") != "56" {
		t.Fatalf("past the limit: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	checkSpec(t, "GET", "/v1/gpus", rec)
	checks := []struct {
		name    string
		remote  string
		headers map[string]string
		path    string
		want    int
	}{
		{"another address", other, nil, "/v1/gpus", 401},
		{"a valid key from the failer's address", failer, good, "/v1/gpus", 200},
		{"a wrong key from it: the address counts every failure", failer, map[string]string{"Authorization": "Bearer " + randomSecret(apikey.Prefix)}, "/v1/gpus", 429},
		{"probes need no key", failer, nil, "/healthz", 200},
	}
	for _, c := range checks {
		if rec := knock(h, "GET", c.path, c.remote, c.headers, ""); rec.Code != c.want {
			t.Errorf("%s: %d, want %d: %s", c.name, rec.Code, c.want, rec.Body)
		}
	}
	now = now.Add(time.Minute)
	if rec := knock(h, "GET", "/v1/gpus", failer, nil, ""); rec.Code != 401 {
		t.Errorf("a window later: %d %s", rec.Code, rec.Body)
	}
}

func TestAuthFailsIPv6GroupedAndBounded(t *testing.T) {
	now := time.Unix(0, 0)
	a := newAuthFails(1, time.Minute, func() time.Time { return now })
	a.fail("2001:db8::1", "")
	if a.fail("2001:db8::2", "").wait == 0 {
		t.Fatal("two addresses of one /64 are one client")
	}
	if a.fail("2001:db9::1", "").wait != 0 {
		t.Fatal("another /64 is another client")
	}
	for range maxFailAddrs + 10 {
		a.fail(randomSecret("")[:20], randomSecret(""))
	}
	if len(a.addrs.counts) > maxFailAddrs+1 || len(a.prefixes.counts) > maxFailPrefixes+1 {
		t.Fatalf("%d addresses, %d prefixes", len(a.addrs.counts), len(a.prefixes.counts))
	}
	if a.fail("10.1.1.1", "kg_zzzzzz").wait == 0 {
		t.Error("past the bound, new addresses and prefixes share a counter, and it is still limited")
	}
	now = now.Add(time.Minute)
	if a.fail("10.1.1.1", "kg_zzzzzz").wait != 0 || len(a.addrs.counts) != 1 {
		t.Errorf("a window later the old counters are pruned: %d left", len(a.addrs.counts))
	}
	if newAuthFails(-1, time.Minute, time.Now) != nil {
		t.Fatal("a negative limit is no limit")
	}
}
