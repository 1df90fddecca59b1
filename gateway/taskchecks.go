package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/tasks"
)

// POST /v1/tasks waits for its task check up to wait_s; past it the answer
// is 202 with a Location, GET /v1/task-checks/{id}, and the check runs on
// whether or not anyone polls it. A client that leaves early is no error:
// the check still registers the task.
const (
	DefaultTaskCheckWait = 60 * time.Second // wait_s when the request gives none
	maxTaskCheckWaitS    = 600
	// taskCheckLimit bounds a check behind a busy queue: past it the check
	// ends wait_timeout (register again).
	taskCheckLimit = time.Hour
	// taskCheckKeep is how long a finished check stays readable.
	taskCheckKeep = time.Hour
)

// Task check states (schema TaskCheck).
const (
	checkRunning    = "running"
	checkRegistered = "registered" // task holds the registered task
	checkRefused    = "refused"    // err is task_invalid or task_exists
	checkFailed     = "failed"     // err says why it could not be decided
)

// taskCheck is one registration's check. Its fields after done is closed
// are written once, before the close, and only read after it.
type taskCheck struct {
	id, taskID, hash string
	done             chan struct{}

	status   string
	task     tasks.Task
	created  bool
	warnings []string // the check verdict's, for a registered task
	err      *apiError
	finished time.Time
}

// taskChecks are the checks of this process: in memory, so a restart or
// another gateway behind the same load balancer answers 404 for a check it
// did not start (register again: a repeat of a registered source is 200).
type taskChecks struct {
	now func() time.Time

	mu      sync.Mutex
	byID    map[string]*taskCheck
	running map[string]*taskCheck // by task id and source hash: a retry joins the check in flight
}

func newTaskChecks(now func() time.Time) *taskChecks {
	return &taskChecks{now: now, byID: map[string]*taskCheck{}, running: map[string]*taskCheck{}}
}

// join returns the running check of (taskID, hash), or nil.
func (tc *taskChecks) join(taskID, hash string) *taskCheck {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.running[taskID+"\x00"+hash]
}

func (tc *taskChecks) add(chk *taskCheck) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := tc.now()
	for id, c := range tc.byID { // drop what has been readable long enough
		if c.status != checkRunning && now.Sub(c.finished) > taskCheckKeep {
			delete(tc.byID, id)
		}
	}
	tc.byID[chk.id] = chk
	tc.running[chk.taskID+"\x00"+chk.hash] = chk
}

func (tc *taskChecks) get(id string) *taskCheck {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.byID[id]
}

// finish records a check's outcome and wakes its waiters.
func (tc *taskChecks) finish(chk *taskCheck, status string, t tasks.Task, created bool, err *apiError) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	chk.status, chk.task, chk.created, chk.err, chk.finished = status, t, created, err, tc.now()
	delete(tc.running, chk.taskID+"\x00"+chk.hash)
	close(chk.done)
}

// taskCheckView is schema TaskCheck.
type taskCheckView struct {
	CheckID  string    `json:"check_id"`
	TaskID   string    `json:"task_id"`
	Status   string    `json:"status"`
	Location string    `json:"location"`
	Task     *taskView `json:"task,omitempty"`
	Error    *apiError `json:"error,omitempty"`
}

func (tc *taskChecks) view(chk *taskCheck) taskCheckView {
	v := taskCheckView{CheckID: chk.id, TaskID: chk.taskID, Status: checkRunning, Location: "/v1/task-checks/" + chk.id}
	select {
	case <-chk.done:
		v.Status, v.Error = chk.status, chk.err
		if chk.status == checkRegistered {
			tv := viewOf(chk.task, true)
			tv.CheckWarnings = chk.warnings
			v.Task = &tv
		}
	default:
	}
	return v
}

// startTaskCheck queues the check of t (registered when valid) and runs its
// wait and registration in the background; a check of the same id and
// source already running is joined instead.
func (s *Server) startTaskCheck(ctx context.Context, t tasks.Task) (*taskCheck, *apiError) {
	if chk := s.taskChecks.join(t.ID, t.TaskHash); chk != nil {
		return chk, nil
	}
	// Queued in the request, so a full queue (429) or a broken one is its
	// answer; the wait is not, so a client that leaves does not stop it.
	f, err := s.evals.CheckTask(ctx, t.Harness(), t.TaskHash, s.cfg.defaultOptions()) // fits the host, as an evaluation's would
	if err != nil {
		s.log.Error("queueing a task check failed", "task", t.ID, "err", err)
		return nil, submitError(err)
	}
	chk := &taskCheck{id: newID("tc_"), taskID: t.ID, hash: t.TaskHash, done: make(chan struct{})}
	s.taskChecks.add(chk)
	go s.finishTaskCheck(chk, f, t)
	return chk, nil
}

// finishTaskCheck waits for the verdict and registers t when valid.
func (s *Server) finishTaskCheck(chk *taskCheck, f *dispatch.Follower, t tasks.Task) {
	ctx, cancel := s.untilStopping(context.Background())
	defer cancel()
	v, aerr := s.awaitTaskCheck(ctx, f, taskCheckLimit)
	switch {
	case aerr != nil:
		s.log.Warn("task check failed", "task", chk.taskID, "check", chk.id, "err", aerr)
		s.taskChecks.finish(chk, checkFailed, tasks.Task{}, false, aerr)
		return
	case v.Status != eval.StatusCorrect:
		s.taskChecks.finish(chk, checkRefused, tasks.Task{}, false,
			newError(CodeTaskInvalid, "source", "task %s refused: %s", chk.taskID, taskCheckReason(v)))
		return
	}
	t, created, err := s.deps.Tasks.Register(ctx, t)
	switch {
	case errors.Is(err, tasks.ErrExists):
		s.taskChecks.finish(chk, checkRefused, tasks.Task{}, false,
			newError(CodeTaskExists, "id", "task %s already exists with another source; choose another id", chk.taskID))
	case err != nil:
		s.log.Error("registering a task failed", "task", chk.taskID, "err", err)
		s.taskChecks.finish(chk, checkFailed, tasks.Task{}, false, storeError(err, "the task registry"))
	default:
		s.log.Info("task registered", "task", chk.taskID, "task_hash", t.TaskHash, "created", created)
		chk.warnings = v.Warnings // read by views once finish closes chk.done
		s.taskChecks.finish(chk, checkRegistered, t, created, nil)
	}
}

// answerTaskCheck waits up to wait for chk and answers as a synchronous
// registration would (201, 200, 422, ...), or 202 with its Location.
func (s *Server) answerTaskCheck(c *gin.Context, chk *taskCheck, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-chk.done:
	case <-timer.C:
	case <-s.stopping:
	case <-c.Request.Context().Done():
		return // the client left; the check runs on
	}
	v := s.taskChecks.view(chk)
	switch v.Status {
	case checkRunning:
		c.Header("Location", v.Location)
		c.JSON(http.StatusAccepted, v)
	case checkRegistered:
		s.answerRegistered(c, chk.task, chk.hash, chk.created, chk.warnings)
	default:
		abort(c, chk.err)
	}
}

// getTaskCheck is GET /v1/task-checks/{id}: 200 with the check, whatever
// its outcome (the outcome is in status and error).
func (s *Server) getTaskCheck(c *gin.Context) {
	id := c.Param("id")
	chk := s.taskChecks.get(id)
	if chk == nil || !strings.HasPrefix(id, "tc_") {
		abort(c, newError(CodeTaskCheckNotFound, "", "task check %q not found: checks are kept an hour after they end, "+
			"by the gateway that ran them; POST /v1/tasks again (a task already registered with this source answers 200)", id))
		return
	}
	c.JSON(http.StatusOK, s.taskChecks.view(chk))
}
