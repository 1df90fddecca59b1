package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// GET /v1/batches lists the stored batches newest first, filters them by
// status and task, pages with before, and refuses a bad query with 400.
func TestBatchListNewestFirstFilteredPaged(t *testing.T) {
	srv, _, ev := startFake(t, Config{})
	h := srv.Handler()
	other := ref + "# another task\n"
	submit := func(reference string, codes []string, wait float64) string {
		rec := post(t, h, "/v1/rewards", map[string]any{"reference": reference, "reward_fn": "binary", "codes": codes, "wait_s": wait})
		if rec.Code/100 != 2 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var r struct {
			BatchID string `json:"batch_id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.BatchID == "" {
			t.Fatalf("%v: %s", err, rec.Body)
		}
		return r.BatchID
	}
	a := submit(ref, []string{"ok a", "wrong a"}, 10)
	b := submit(other, []string{"ok b"}, 10)
	c := submit(ref, []string{"hold c"}, 0)
	defer close(ev.release)

	list := func(query string) batchList {
		t.Helper()
		var l batchList
		if rec := call(t, h, http.MethodGet, "/v1/batches"+query, "/v1/batches", nil, &l); rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", query, rec.Code, rec.Body)
		}
		return l
	}
	ids := func(l batchList) string {
		s := ""
		for _, x := range l.Batches {
			s += x.BatchID + " "
		}
		return s
	}
	all := list("")
	if got, want := ids(all), c+" "+b+" "+a+" "; got != want || all.NextBefore != "" {
		t.Fatalf("listed %s (next %q), want newest first %s", got, all.NextBefore, want)
	}
	first := all.Batches[2]
	if first.Status != statusDone || first.Done != 2 || first.Total != 2 || first.Correct != 1 || first.MeanReward == nil ||
		*first.MeanReward != 0.5 || first.RewardFn != "binary" || first.TaskHash != eval.HashSource(ref) || first.Location != "/v1/batches/"+a {
		t.Errorf("batch a listed as %+v", first)
	}
	if r := all.Batches[0]; r.Status != statusRunning || r.Done != 0 || r.MeanReward != nil {
		t.Errorf("the held batch listed as %+v", r)
	}
	if got := ids(list("?status=done")); got != b+" "+a+" " {
		t.Errorf("done: %s", got)
	}
	if got := ids(list("?status=running")); got != c+" " {
		t.Errorf("running: %s", got)
	}
	if got := ids(list("?task=" + eval.HashSource(other))); got != b+" " {
		t.Errorf("by task hash: %s", got)
	}
	if got := ids(list("?task=inline&status=done")); got != b+" "+a+" " {
		t.Errorf("by task name: %s", got)
	}
	page := list("?limit=2")
	if ids(page) != c+" "+b+" " || page.NextBefore != b {
		t.Errorf("page 1: %s next %q", ids(page), page.NextBefore)
	}
	if page = list("?limit=2&before=" + page.NextBefore); ids(page) != a+" " || page.NextBefore != "" {
		t.Errorf("page 2: %s next %q", ids(page), page.NextBefore)
	}
	for _, bad := range []struct{ query, field string }{
		{"?status=finished", "status"}, {"?limit=0", "limit"}, {"?limit=201", "limit"}, {"?limit=x", "limit"}, {"?before=%26x", "before"}, {"?before=", "before"}, {"?status=", "status"},
	} {
		rec := call(t, h, http.MethodGet, "/v1/batches"+bad.query, "/v1/batches", nil, nil)
		wantError(t, rec, http.StatusBadRequest, CodeInvalidRequest, bad.field)
	}
	wantError(t, call(t, h, http.MethodGet, "/v1/batches?before=b_nosuch", "/v1/batches", nil, nil),
		http.StatusNotFound, CodeBatchNotFound, "before", "no stored batch")
	// The held batch, once in, is listed done.
	ev.release <- struct{}{}
	kgtest.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if l := list("?status=running"); len(l.Batches) != 0 {
			return fmt.Errorf("still running: %s", ids(l))
		}
		return nil
	})
}
