package skills

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/rollout"
)

// checkEvents fails t unless the events are exactly the stored versions, in
// version order per rule.
func checkEvents(t *testing.T, f *fixture) {
	t.Helper()
	stored, err := f.store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	evs := f.rec.all()
	if len(evs) != len(stored) {
		t.Fatalf("%d events for %d stored versions", len(evs), len(stored))
	}
	next := map[string]int{}
	byKey := map[string]Rule{}
	for _, r := range stored {
		byKey[fmt.Sprint(r.ID, "/", r.Version)] = r
	}
	for _, e := range evs {
		next[e.rule.ID]++
		if e.rule.Version != next[e.rule.ID] {
			t.Errorf("event %s v%d (%s) out of order, want v%d", e.rule.ID, e.rule.Version, e.reason, next[e.rule.ID])
		}
		if s, ok := byKey[fmt.Sprint(e.rule.ID, "/", e.rule.Version)]; !ok || !ruleEqual(s, e.rule) {
			t.Errorf("event %s v%d differs from the stored version:\n %+v\n %+v", e.rule.ID, e.rule.Version, e.rule, s)
		}
	}
}

func TestEveryChangeIsAnEvent(t *testing.T) {
	f := newFixture(t, Config{OnOffMin: 2})
	f.llm.push("skill.extract", ruleFoo+"\nPATTERN: tl\\.foo", "You cannot use undefined names.", "You cannot index out of range.")
	f.observe(t, nameErrors(4)...) // created, hit
	a := f.rules(t)[0].ID
	f.llm.push("skill.dedup", "DUPLICATE "+a)
	f.observe(t, undefinedGlobal(3)...) // merged
	for i := range 3 {
		f.observe(t, failure(fmt.Sprintf("i%d", i), "t", "IndexError: index 3 is out of bounds", "c"))
	}
	b := ""
	for _, r := range f.rules(t) {
		if r.ID != a {
			b = r.ID
		}
	}
	onOff(f, t, b, true, 2, 0)
	onOff(f, t, b, false, 2, 2)                          // retired:onoff
	f.observe(t, passed("p", "y = tl.foo(x)", nil, nil)) // retired:passed
	f.llm.push("skill.extract", "You cannot call tl.foo.")
	f.observe(t, nameErrors(3)...)
	c := ""
	for _, r := range f.rules(t) {
		if r.Active() {
			c = r.ID
		}
	}
	if err := f.mem.Retire(context.Background(), c, "test"); err != nil { // retired:manual
		t.Fatal(err)
	}
	want := []string{ReasonCreated, ReasonHit, ReasonMerged, ReasonCreated, ReasonRetiredOnOff,
		ReasonRetiredPassed, ReasonCreated, ReasonRetiredManual}
	if got := f.rec.reasons(); !reflect.DeepEqual(got, want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
	checkEvents(t, f)
	// Each event's row has every column of the skills table filled (the
	// retired reason once retired), but those that are empty by right: the
	// reason (the event's, set by the sink), the pattern and aliases (none
	// here), the on/off counts (none yet).
	mayBeEmpty := map[string]bool{"Reason": true, "Pattern": true, "Aliases": true, "OnOffUsed": true,
		"OnOffUsedPass": true, "OnOffOmitted": true, "OnOffOmittedPass": true}
	for _, e := range f.rec.all() {
		row := reflect.ValueOf(e.rule.Row())
		for i := range row.NumField() {
			name := row.Type().Field(i).Name
			if row.Field(i).IsZero() && !mayBeEmpty[name] && (name != "RetiredReason" || !e.rule.Active()) {
				t.Errorf("event %s v%d (%s): row column %s is empty", e.rule.ID, e.rule.Version, e.reason, name)
			}
		}
	}
}

func TestConcurrentObserve(t *testing.T) {
	f := newFixture(t, Config{Now: time.Now})
	f.llm.fallback = func(req rollout.Request) (string, error) {
		time.Sleep(time.Millisecond) // let other observations in while the call is out
		return "You cannot repeat mistake " + fmt.Sprint(len(req.Messages[1].Content)) + ".", nil
	}
	classes := []string{"NameError", "TypeError", "IndexError", "ValueError"}
	const workers, per = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			for i := range per {
				cls := classes[i%len(classes)]
				o := failure(fmt.Sprintf("w%d-%d", w, i), "t", fmt.Sprintf("%s: thing '%s%d' went wrong at line %d", cls, cls, w, i), "code "+cls)
				if i%5 == 4 {
					var ids []string
					if rs, err := f.mem.Rules(ctx); err == nil {
						for _, r := range rs {
							ids = append(ids, r.ID)
						}
					}
					o = passed(o.EvalID, "code", ids, nil)
				}
				if err := f.mem.Observe(ctx, o); err != nil {
					t.Error(err)
				}
				if _, err := f.mem.Retrieve(ctx, o.Verdict.ErrorSignature, 3); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	rs := f.rules(t)
	if len(rs) != len(classes) {
		t.Fatalf("%d rules, want one per signature (%d)", len(rs), len(classes))
	}
	if n := len(f.llm.callsFor("skill.extract")); n != len(classes) {
		t.Errorf("%d extract calls, want %d", n, len(classes))
	}
	failures := workers * per * 4 / 5 / len(classes)
	for _, r := range rs {
		if r.Hits != failures {
			t.Errorf("%s: %d hits, want %d (every failure counted once)", r.Signature, r.Hits, failures)
		}
		if !r.Active() {
			t.Errorf("%s retired: %s", r.ID, r.RetiredReason)
		}
	}
	checkEvents(t, f)
}
