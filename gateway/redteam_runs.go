package gateway

import (
	"sync"
	"time"

	"github.com/kernelgate/kernelgate/redteam"
)

// redteamKeep is how long a finished red-team run stays readable.
const redteamKeep = time.Hour

// Red-team run states (schema RedteamRun).
const (
	redteamRunning = "running"
	redteamDone    = "done"   // report holds the outcome, whatever it is
	redteamFailed  = "failed" // error says why there is no report
)

// redteamRun is one POST /v1/redteam. Its fields change under
// redteamRuns.mu only.
type redteamRun struct {
	id      string
	created time.Time
	total   int      // tasks, one batch each
	batches []string // their ids, in the order of the request's tasks
	done    int      // batches complete

	status   string
	report   *redteam.Report
	err      *apiError
	finished time.Time
}

// redteamRuns are the runs of this process: in memory, like task checks,
// so another gateway answers 404 for a run it did not start; the batches
// themselves stay readable anywhere at GET /v1/batches/{id}.
type redteamRuns struct {
	now func() time.Time

	mu   sync.Mutex
	byID map[string]*redteamRun
}

func newRedteamRuns(now func() time.Time) *redteamRuns {
	return &redteamRuns{now: now, byID: map[string]*redteamRun{}}
}

func (rr *redteamRuns) add(r *redteamRun) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	now := rr.now()
	for id, old := range rr.byID { // drop what has been readable long enough
		if old.status != redteamRunning && now.Sub(old.finished) > redteamKeep {
			delete(rr.byID, id)
		}
	}
	rr.byID[r.id] = r
}

// batchDone counts one of r's batches as complete.
func (rr *redteamRuns) batchDone(r *redteamRun) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	r.done++
}

func (rr *redteamRuns) finish(r *redteamRun, report *redteam.Report, err *apiError) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	r.status, r.report, r.err, r.finished = redteamDone, report, err, rr.now()
	if err != nil {
		r.status = redteamFailed
	}
}

// redteamView is schema RedteamRun.
type redteamView struct {
	RedteamID string          `json:"redteam_id"`
	Status    string          `json:"status"`
	Done      int             `json:"done"`
	Total     int             `json:"total"`
	Batches   []string        `json:"batches"`
	CreatedAt time.Time       `json:"created_at"`
	Location  string          `json:"location"`
	Page      string          `json:"page"` // the dashboard's page for the run
	Report    *redteam.Report `json:"report,omitempty"`
	Error     *apiError       `json:"error,omitempty"`
}

// view is r as answers show it; ok is false for an unknown id.
func (rr *redteamRuns) view(id string) (redteamView, bool) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	r := rr.byID[id]
	if r == nil {
		return redteamView{}, false
	}
	return redteamView{RedteamID: r.id, Status: r.status, Done: r.done, Total: r.total,
		Batches: append([]string{}, r.batches...), CreatedAt: r.created, Location: "/v1/redteam/" + r.id,
		Page: "/ui/redteam/" + r.id, Report: r.report, Error: r.err}, true
}
