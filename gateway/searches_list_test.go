package gateway

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/rollout/runner"
)

// startSearches starts n searches of task and returns their ids in start
// order (the fake's created_at is a second apart).
func startSearches(t *testing.T, f *fakeSearches, task string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		st, err := f.Start(t.Context(), runner.Request{TaskID: task, Steps: 2})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.SearchID)
	}
	return ids
}

func listPage(t *testing.T, h http.Handler, query string) searchList {
	t.Helper()
	var out searchList
	rec := call(t, h, "GET", "/v1/searches?"+query, "/v1/searches", nil, &out)
	if rec.Code != http.StatusOK {
		t.Fatalf("?%s: status %d: %s", query, rec.Code, rec.Body)
	}
	return out
}

func idsOf(sts []runner.Status) []string {
	ids := []string{}
	for _, st := range sts {
		ids = append(ids, st.SearchID)
	}
	return ids
}

func TestListSearchesFilters(t *testing.T) {
	h, f := searchServer(t)
	if got := listPage(t, h, ""); len(got.Searches) != 0 || got.NextCursor != "" {
		t.Fatalf("no searches yet: %+v", got)
	}
	relu := startSearches(t, f, "ci/1_add_relu", 3) // s_1..s_3
	other := startSearches(t, f, "ci/2_matmul", 2)  // s_4, s_5
	f.step(relu[0], goodStep(1))
	f.end(relu[0], runner.StateDone)
	f.end(other[0], runner.StateFailed)
	f.end(relu[1], runner.StateCancelled)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{other[1], other[0], relu[2], relu[1], relu[0]}},
		{"state=running", []string{other[1], relu[2]}},
		{"state=done", []string{relu[0]}},
		{"state=budget", []string{}},
		{"task_id=ci/1_add_relu", []string{relu[2], relu[1], relu[0]}},
		{"task_id=ci/2_matmul&state=failed", []string{other[0]}},
		{"task_id=ci/none", []string{}},
	} {
		t.Run(c.query, func(t *testing.T) {
			got := listPage(t, h, c.query)
			if !slices.Equal(idsOf(got.Searches), c.want) || got.NextCursor != "" {
				t.Fatalf("listed %v (next %q), want %v", idsOf(got.Searches), got.NextCursor, c.want)
			}
		})
	}
	got := listPage(t, h, "state=done")
	if st := got.Searches[0]; st.Nodes != nil || st.Steps != 1 || st.TaskID != "ci/1_add_relu" {
		t.Errorf("a listed search: %+v, want its status without nodes", st)
	}
}

func TestListSearchesPages(t *testing.T) {
	h, f := searchServer(t)
	ids := startSearches(t, f, "ci/1_add_relu", 5)
	slices.Reverse(ids) // newest first

	first := listPage(t, h, "limit=3")
	if !slices.Equal(idsOf(first.Searches), ids[:3]) || first.NextCursor == "" {
		t.Fatalf("page 1: %v next %q, want %v and a cursor", idsOf(first.Searches), first.NextCursor, ids[:3])
	}
	// A search started between pages is on no later page: pages continue
	// from where the last one ended.
	startSearches(t, f, "ci/1_add_relu", 1)
	second := listPage(t, h, "limit=3&cursor="+url.QueryEscape(first.NextCursor))
	if !slices.Equal(idsOf(second.Searches), ids[3:]) || second.NextCursor != "" {
		t.Fatalf("page 2: %v next %q, want %v and no cursor", idsOf(second.Searches), second.NextCursor, ids[3:])
	}
	// Exactly a page left: no cursor pointing at an empty page.
	if p := listPage(t, h, "limit=6"); len(p.Searches) != 6 || p.NextCursor != "" {
		t.Fatalf("limit=6 of 6: %d searches, next %q", len(p.Searches), p.NextCursor)
	}
	// The default page is 50.
	startSearches(t, f, "ci/1_add_relu", 50)
	p := listPage(t, h, "")
	if len(p.Searches) != defaultSearchPage || p.NextCursor == "" {
		t.Fatalf("default page: %d searches, next %q", len(p.Searches), p.NextCursor)
	}
	if rest := listPage(t, h, "cursor="+url.QueryEscape(p.NextCursor)); len(rest.Searches) != 6 || rest.NextCursor != "" {
		t.Fatalf("after the default page: %d searches, next %q, want 6 and none", len(rest.Searches), rest.NextCursor)
	}
}

func TestListSearchesBadQuery(t *testing.T) {
	h, f := searchServer(t)
	startSearches(t, f, "ci/1_add_relu", 2)
	forged := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	for _, c := range []struct{ query, field, want string }{
		{"state=finished", "state", `state must be one of running, done, budget, cancelled, failed, got "finished"`},
		{"limit=0", "limit", "1..500"},
		{"limit=501", "limit", "1..500"},
		{"limit=ten", "limit", `got "ten"`},
		{"cursor=%21%21", "cursor", "not one this server gave"},
		{"cursor=" + forged(`{"v":1}`), "cursor", "not one this server gave"},
		{"cursor=" + forged(`{"v":2,"t":"2026-11-29T12:00:00Z","id":"s_1"}`), "cursor", "not one this server gave"},
		{"cursor=" + forged(`{"v":1,"t":"yesterday","id":"s_1"}`), "cursor", "not one this server gave"},
		{"cursor=" + forged(`[1,2]`), "cursor", "not one this server gave"},
	} {
		t.Run(c.query, func(t *testing.T) {
			rec := call(t, h, "GET", "/v1/searches?"+c.query, "/v1/searches", nil, nil)
			wantError(t, rec, http.StatusBadRequest, CodeInvalidRequest, c.field, c.want)
		})
	}

	f.listErr = errors.New("runner.List: bucket gone")
	rec := call(t, h, "GET", "/v1/searches", "/v1/searches", nil, nil)
	wantError(t, rec, http.StatusInternalServerError, CodeInternal, "", "listing searches failed")

	off := New(Config{}, Deps{Log: kgtest.Logger(t)}).Handler()
	rec = call(t, off, "GET", "/v1/searches", "/v1/searches", nil, nil)
	wantError(t, rec, http.StatusServiceUnavailable, CodeNotReady, "", "not configured")
}

// Listing needs scope search, like every search endpoint; searches have no
// owner, so a search key lists every search, as it may GET each one.
func TestListSearchesAuth(t *testing.T) {
	file, keys := keyFile(t, map[string]string{"trainer": "reward", "alice": "search", "bob": "search"})
	f := newFakeSearches()
	h := New(Config{}, Deps{Keys: apikey.NewKeyring(file), Log: kgtest.Logger(t), Searches: f}).Handler()
	rec := request(t, h, "POST", "/v1/searches", "Bearer "+keys["alice"], []byte(`{"task_id":"ci/1_add_relu","steps":2}`))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("alice's search: %d %s", rec.Code, rec.Body)
	}
	for _, c := range []struct {
		key    string
		status int
	}{{"", 401}, {"trainer", 403}, {"bob", 200}, {"alice", 200}} {
		t.Run(fmt.Sprintf("%q", c.key), func(t *testing.T) {
			auth := ""
			if c.key != "" {
				auth = "Bearer " + keys[c.key]
			}
			rec := request(t, h, "GET", "/v1/searches", auth, nil)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			checkSpec(t, "GET", "/v1/searches", rec)
			if c.status == 200 && !slices.Equal(idsOf(decodeList(t, rec.Body.Bytes()).Searches), []string{"s_1"}) {
				t.Errorf("listed %s, want alice's s_1", rec.Body)
			}
		})
	}
}

func decodeList(t *testing.T, b []byte) searchList {
	t.Helper()
	var out searchList
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A cursor comes back from clients: decoding must not panic, and what
// decodes encodes to the same place.
func FuzzSearchCursor(f *testing.F) {
	f.Add(encodeCursor(runner.Mark{CreatedAt: time.Date(2026, 11, 29, 12, 0, 0, 5, time.UTC), SearchID: "s_0123456789abcdef"}))
	f.Add("")
	f.Add("!!")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"t":"0001-01-01T00:00:00Z","id":"x"}`)))
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := decodeCursor(s)
		if !ok {
			return
		}
		back, ok := decodeCursor(encodeCursor(m))
		if !ok || !back.CreatedAt.Equal(m.CreatedAt) || back.SearchID != m.SearchID {
			t.Fatalf("%q decodes to %+v, which round-trips to %+v, %v", s, m, back, ok)
		}
	})
}
