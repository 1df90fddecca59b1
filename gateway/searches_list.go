package gateway

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/rollout/runner"
)

// Pages of GET /v1/searches.
const (
	defaultSearchPage = 50
	maxSearchPage     = 500
)

// searchList is the 200 of GET /v1/searches (schema SearchList).
type searchList struct {
	Searches   []runner.Status `json:"searches"`
	NextCursor string          `json:"next_cursor,omitempty"` // more follow: pass as ?cursor=
}

// listSearches is GET /v1/searches: newest first, filtered by state and
// task_id, a page of limit at a time. Every key with scope search sees
// every search, as GET /v1/searches/{id} does.
func (s *Server) listSearches(c *gin.Context) {
	svc, ok := s.searches(c)
	if !ok {
		return
	}
	q, aerr := searchQuery(c)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	page := q.Limit
	q.Limit++ // one more than the page says whether another follows
	got, err := svc.List(c.Request.Context(), q)
	if err != nil {
		s.searchFailed(c, "listing searches", "", err, "")
		return
	}
	out := searchList{Searches: got}
	if len(got) > page {
		out.Searches = got[:page]
		out.NextCursor = encodeCursor(runner.MarkOf(got[page-1]))
	}
	if out.Searches == nil {
		out.Searches = []runner.Status{}
	}
	c.JSON(http.StatusOK, out)
}

// searchQuery reads the list's query parameters; a bad one is 400
// invalid_request naming it.
func searchQuery(c *gin.Context) (runner.ListQuery, *apiError) {
	q := runner.ListQuery{State: c.Query("state"), TaskID: c.Query("task_id"), Limit: defaultSearchPage}
	if q.State != "" && !slices.Contains(runner.States, q.State) {
		return q, newError(CodeInvalidRequest, "state", "state must be one of %s, got %q", strings.Join(runner.States, ", "), q.State)
	}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxSearchPage {
			return q, newError(CodeInvalidRequest, "limit", "limit must be an integer in 1..%d, got %q", maxSearchPage, l)
		}
		q.Limit = n
	}
	if cur := c.Query("cursor"); cur != "" {
		m, ok := decodeCursor(cur)
		if !ok {
			return q, newError(CodeInvalidRequest, "cursor", "cursor %q is not one this server gave: pass a next_cursor unchanged", cur)
		}
		q.After = &m
	}
	return q, nil
}

// cursor is what next_cursor encodes (base64url JSON): the page's last
// search. Clients treat it as opaque; V lets its form change.
type cursor struct {
	V         int       `json:"v"`
	CreatedAt time.Time `json:"t"`
	SearchID  string    `json:"id"`
}

const cursorVersion = 1

func encodeCursor(m runner.Mark) string {
	b, _ := json.Marshal(cursor{V: cursorVersion, CreatedAt: m.CreatedAt, SearchID: m.SearchID}) // cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor from the query (untrusted: FuzzSearchCursor).
func decodeCursor(s string) (runner.Mark, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return runner.Mark{}, false
	}
	var cur cursor
	if err := json.Unmarshal(b, &cur); err != nil || cur.V != cursorVersion || cur.CreatedAt.IsZero() || cur.SearchID == "" {
		return runner.Mark{}, false
	}
	return runner.Mark{CreatedAt: cur.CreatedAt, SearchID: cur.SearchID}, true
}
