package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/datasets"
	"github.com/kernelgate/kernelgate/tasks"
)

// Task ids contain '/' (ci/1_add_relu), so GET /v1/tasks/*id is a wildcard
// route: the id is the rest of the path, sent as is (an escaped %2F works too).
func (s *Server) taskRoutes(r *gin.Engine) {
	r.GET("/v1/tasks", s.listTasks)
	r.POST("/v1/tasks", s.registerTask)
	r.GET("/v1/tasks/*id", s.getTask)
	r.GET("/v1/task-checks/:id", s.getTaskCheck) // taskchecks.go
}

// taskView is a task in answers: schema TaskSummary (list) or Task (with
// source and prompt).
type taskView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Origin    string    `json:"origin"`
	TaskHash  string    `json:"task_hash"`
	CreatedAt time.Time `json:"created_at"`
	Source    string    `json:"source,omitempty"`
	Prompt    string    `json:"prompt,omitempty"`
	// GPU: a suite task's figures from its manifest (tasks.WithFigures).
	GPU *datasets.GPURun `json:"gpu,omitempty"`
	// CheckWarnings: what the task check of this registration warned about
	// (its verdict's warnings); only on the answer to the registration.
	CheckWarnings []string `json:"check_warnings,omitempty"`
}

func viewOf(t tasks.Task, full bool) taskView {
	v := taskView{ID: t.ID, Name: t.Name, Origin: string(t.Origin), TaskHash: t.TaskHash, CreatedAt: t.CreatedAt, GPU: t.GPU}
	if full {
		v.Source, v.Prompt = t.Source, t.Prompt()
	}
	return v
}

// taskList is the 200 body of GET /v1/tasks (schema TaskList).
type taskList struct {
	Tasks []taskView `json:"tasks"`
	Next  string     `json:"next,omitempty"` // pass as ?after= for the next page
}

// maxTaskPage bounds ?limit=.
const maxTaskPage = 1000

func (s *Server) listTasks(c *gin.Context) {
	origin, given := c.GetQuery("origin")
	if given && origin != string(tasks.OriginSuite) && origin != string(tasks.OriginAPI) {
		abort(c, newError(CodeInvalidRequest, "origin", "origin must be suite or api, got %q", origin))
		return
	}
	limit := maxTaskPage
	if l, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxTaskPage {
			abort(c, newError(CodeInvalidRequest, "limit", "limit must be an integer in 1..%d, got %q", maxTaskPage, l))
			return
		}
		limit = n
	}
	after := c.Query("after")
	all, err := s.deps.Tasks.List(c.Request.Context())
	if err != nil {
		s.log.Error("listing tasks failed", "err", err)
		abort(c, storeError(err, "the task registry"))
		return
	}
	out := taskList{Tasks: []taskView{}}
	for _, t := range all { // sorted by id
		if (origin != "" && string(t.Origin) != origin) || (after != "" && t.ID <= after) {
			continue
		}
		if len(out.Tasks) == limit {
			out.Next = out.Tasks[limit-1].ID
			break
		}
		out.Tasks = append(out.Tasks, viewOf(t, false))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getTask(c *gin.Context) {
	id := strings.TrimPrefix(c.Param("id"), "/")
	t, err := s.deps.Tasks.Get(c.Request.Context(), id)
	if err != nil {
		abort(c, s.taskError(err, id, ""))
		return
	}
	c.JSON(http.StatusOK, viewOf(t, true))
}

// taskByID resolves a request's task id; field names it in errors.
func (s *Server) taskByID(ctx context.Context, id, field string) (tasks.Task, *apiError) {
	t, err := s.deps.Tasks.Get(ctx, id)
	if err != nil {
		return tasks.Task{}, s.taskError(err, id, field)
	}
	return t, nil
}

// registeredTask is the registered task whose source an inline reference
// is, if any, found by the reference's hash: its rows then carry that task's
// id. A registry that cannot be read only costs the id, never the request.
func (s *Server) registeredTask(ctx context.Context, taskHash string) (tasks.Task, bool) {
	t, ok, err := s.deps.Tasks.ByHash(ctx, taskHash)
	if err != nil {
		s.log.Warn("task lookup by hash failed; the reference stays inline", "err", err)
		return tasks.Task{}, false
	}
	return t, ok
}

func (s *Server) taskError(err error, id, field string) *apiError {
	if errors.Is(err, tasks.ErrNotFound) {
		return newError(CodeTaskNotFound, field, "task %q not found; GET /v1/tasks lists the registered ids, or pass the task source as reference", id)
	}
	s.log.Error("task lookup failed", "task", id, "err", err)
	e := storeError(err, "the task registry")
	e.Field = field
	return e
}

// taskRequest is the body of POST /v1/tasks (schema TaskRequest).
type taskRequest struct {
	ID     *string  `json:"id"`
	Source *string  `json:"source"`
	WaitS  *float64 `json:"wait_s"` // nil: DefaultTaskCheckWait
}

// registerTask validates the source by running it once in the sandbox (a
// task check, never in this process: it is untrusted code) and registers
// it: 201 when new, 200 when the id already holds this very source. Past
// wait_s it answers 202 and the check goes on (taskchecks.go).
func (s *Server) registerTask(c *gin.Context) {
	var req taskRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	switch {
	case req.Source == nil || trimSpec(*req.Source) == "":
		abort(c, newError(CodeInvalidRequest, "source", "source is required: the task's KernelBench-format Python source (class Model, get_inputs, get_init_inputs)"))
		return
	case len(*req.Source) > tasks.MaxSourceBytes:
		abort(c, newError(CodeBodyTooLarge, "source", "source is %d bytes; at most %d", len(*req.Source), tasks.MaxSourceBytes))
		return
	}
	wait := DefaultTaskCheckWait
	if req.WaitS != nil {
		if !(*req.WaitS >= 0 && *req.WaitS <= maxTaskCheckWaitS) {
			abort(c, newError(CodeInvalidRequest, "wait_s", "wait_s must be in 0..%d, got %v", maxTaskCheckWaitS, *req.WaitS))
			return
		}
		wait = time.Duration(*req.WaitS * float64(time.Second))
	}
	id := "" // New's content-addressed default
	if req.ID != nil {
		if err := tasks.ValidID(*req.ID); err != nil {
			abort(c, newError(CodeInvalidRequest, "id", "%v", err))
			return
		}
		id = *req.ID
	}
	// The source is hashed here, once: the check, its join key and the
	// registration all carry t.TaskHash. Register stamps CreatedAt.
	t := tasks.New(id, *req.Source, tasks.OriginAPI, time.Time{})
	ctx := c.Request.Context()
	if prev, err := s.deps.Tasks.Get(ctx, t.ID); err == nil {
		s.answerRegistered(c, prev, t.TaskHash, false, nil)
		return
	} else if !errors.Is(err, tasks.ErrNotFound) {
		abort(c, s.taskError(err, t.ID, "id"))
		return
	}
	chk, aerr := s.startTaskCheck(ctx, t)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	s.answerTaskCheck(c, chk, wait)
}

// answerRegistered answers a registration of the source hashed taskHash
// under an id that holds prev. warnings are its task check's, when one ran.
func (s *Server) answerRegistered(c *gin.Context, prev tasks.Task, taskHash string, created bool, warnings []string) {
	switch {
	case created:
		v := viewOf(prev, true)
		v.CheckWarnings = warnings
		c.JSON(http.StatusCreated, v)
	case prev.TaskHash == taskHash:
		c.JSON(http.StatusOK, viewOf(prev, true))
	default:
		abort(c, newError(CodeTaskExists, "id", "task %s already exists (%s) with another source; choose another id", prev.ID, prev.Origin))
	}
}
