package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/redteam"
	"github.com/kernelgate/kernelgate/reward"
)

// POST /v1/redteam attacks registered tasks with every attack class
// (docs/redteam.md). The registry holds tasks, not solutions, so the caller
// sends each task's honest solution; each task's control and variants are
// one batch on the normal queue, as POST /v1/rewards makes one. The answer
// is 202 at once; GET /v1/redteam/{id} reads progress and, once every batch
// is in, the report.
const (
	maxRedteamTasks = 64
	// redteamLimit bounds a run behind a busy queue: past it the run fails
	// (its batches stay readable).
	redteamLimit = 2 * time.Hour
)

type redteamRequest struct {
	Tasks   []redteamTaskRequest `json:"tasks"`
	Classes []string             `json:"classes"`
	Options json.RawMessage      `json:"options"`
}

type redteamTaskRequest struct {
	TaskID   string `json:"task_id"`
	Solution string `json:"solution"`
}

func (s *Server) redteamRoutes(r *gin.Engine) {
	r.POST("/v1/redteam", s.startRedteam)
	r.GET("/v1/redteam/:id", s.getRedteam)
}

// startRedteam is POST /v1/redteam.
func (s *Server) startRedteam(c *gin.Context) {
	var req redteamRequest
	if aerr := s.readJSON(c, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	ctx := c.Request.Context()
	targets, classes, opts, aerr := s.parseRedteam(ctx, req)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	if aerr := s.canRun(opts.Requires); aerr != nil {
		abort(c, aerr)
		return
	}
	run := &redteamRun{id: newID("rt_"), created: time.Now().UTC(), total: len(targets), status: redteamRunning}
	for range targets {
		run.batches = append(run.batches, newID("b_"))
	}
	s.redteams.add(run)
	// The run outlives the request; the request's values (who asked) go with
	// its batches.
	go s.runRedteam(context.WithoutCancel(ctx), run, targets, classes, opts)
	v, _ := s.redteams.view(run.id)
	c.Header("Location", v.Location)
	c.JSON(http.StatusAccepted, v)
}

// parseRedteam validates a request: known classes, registered tasks, a
// solution each that the generator can transform, options within the caps.
func (s *Server) parseRedteam(ctx context.Context, req redteamRequest) ([]redteam.Target, []redteam.Class, eval.Options, *apiError) {
	var opts eval.Options
	switch n := len(req.Tasks); {
	case n == 0:
		return nil, nil, opts, newError(CodeInvalidRequest, "tasks", "at least one {task_id, solution} is required")
	case n > maxRedteamTasks:
		return nil, nil, opts, newError(CodeInvalidRequest, "tasks", "%d tasks in one run; at most %d", n, maxRedteamTasks)
	}
	classes, err := redteam.Select(redteam.Classes(), req.Classes)
	if err != nil {
		return nil, nil, opts, newError(CodeInvalidRequest, "classes", "%v", err)
	}
	if len(classes)+1 > s.cfg.MaxItems {
		return nil, nil, opts, newError(CodeTooManyItems, "classes", "%d classes and a control make batches of %d; at most %d", len(classes), len(classes)+1, s.cfg.MaxItems)
	}
	opts, aerr := s.cfg.parseOptions(req.Options)
	if aerr != nil {
		return nil, nil, opts, aerr
	}
	seen := map[string]bool{}
	var targets []redteam.Target
	for i, tr := range req.Tasks {
		field := fmt.Sprintf("tasks[%d]", i)
		switch {
		case tr.TaskID == "":
			return nil, nil, opts, newError(CodeInvalidRequest, field+".task_id", "task_id is empty: give a registered task id (GET /v1/tasks)")
		case seen[tr.TaskID]:
			return nil, nil, opts, newError(CodeInvalidRequest, field+".task_id", "task %q is named twice", tr.TaskID)
		case strings.TrimSpace(tr.Solution) == "":
			return nil, nil, opts, newError(CodeInvalidRequest, field+".solution", "solution is empty: give the task's honest solution (a module defining ModelNew)")
		case len(tr.Solution) > opts.MaxCodeBytes:
			return nil, nil, opts, newError(CodeInvalidRequest, field+".solution", "solution is %d bytes; max_code_bytes is %d", len(tr.Solution), opts.MaxCodeBytes)
		}
		seen[tr.TaskID] = true
		t, aerr := s.taskByID(ctx, tr.TaskID, field+".task_id")
		if aerr != nil {
			return nil, nil, opts, aerr
		}
		if _, err := redteam.Generate(classes[0], t.Source, tr.Solution, redteam.Prelude{}); err != nil {
			return nil, nil, opts, newError(CodeInvalidRequest, field+".solution", "cannot generate attacks from it: %v", err)
		}
		targets = append(targets, redteam.Target{ID: t.ID, Task: t.Harness(), Solution: tr.Solution})
	}
	return targets, classes, opts, nil
}

// runRedteam queues one batch per target (every one at once, so the
// workers take them side by side), waits for them all and builds the
// report. Every variant is evaluated afresh (no cached verdict), so the
// report is about the harness the workers run now.
func (s *Server) runRedteam(ctx context.Context, run *redteamRun, targets []redteam.Target, classes []redteam.Class, opts eval.Options) {
	start := time.Now()
	ctx, cancel := s.untilStopping(ctx)
	defer cancel()
	ctx, cancelLimit := context.WithTimeout(ctx, redteamLimit)
	defer cancelLimit()
	po := redteam.PlanOptions{SkipGPUOnly: s.deps.TimingMode() == eval.TimingCPUInterpreter, Nonce: run.id}
	cases := redteam.Plan(targets, classes, po)
	results := make([]redteam.Result, len(cases))
	errs := make([]*apiError, len(targets))
	var wg sync.WaitGroup
	for ti, t := range targets {
		var idx []int // cases of t that run, in item order
		for i, cs := range cases {
			if cs.Target == t.ID && cs.Skip == "" {
				idx = append(idx, i)
			}
		}
		wg.Go(func() {
			errs[ti] = s.redteamBatch(ctx, run, run.batches[ti], t, cases, idx, results, opts)
		})
	}
	wg.Wait()
	for ti, aerr := range errs {
		if aerr != nil {
			s.log.Warn("red-team run failed", "redteam", run.id, "batch", run.batches[ti], "err", aerr)
			s.redteams.finish(run, nil, aerr)
			return
		}
	}
	// No canaries and no look for leftovers: the workers may be other hosts.
	report := redteam.Build(cases, results, classes, redteam.Judging{})
	report.WallS = time.Since(start).Seconds()
	s.log.Info("red-team run done", "redteam", run.id, "caught", report.Caught, "missed", report.Missed, "ok", report.OK)
	s.redteams.finish(run, &report, nil)
}

// redteamBatch runs one target's cases (idx, into results) as batch id.
func (s *Server) redteamBatch(ctx context.Context, run *redteamRun, id string, t redteam.Target, cases []redteam.Case,
	idx []int, results []redteam.Result, opts eval.Options) *apiError {
	// The task by its id alone: runBatch takes it, and the hash made where it
	// was registered, from the registry.
	spec := batchSpec{taskID: t.ID, rewardFn: reward.Default, options: opts, wait: redteamLimit, bypass: true}
	for _, i := range idx {
		spec.items = append(spec.items, cases[i].Code)
	}
	resp, aerr := s.runBatch(ctx, id, spec)
	if aerr != nil {
		return aerr
	}
	if !resp.complete() {
		return newError(CodeWaitTimeout, "", "batch %s of task %s: %d of %d verdicts not in when the run stopped (the gateway is stopping, or %s passed); they stay readable at GET /v1/batches/%s",
			id, t.ID, resp.Total-resp.Done, resp.Total, redteamLimit, id)
	}
	for k, i := range idx {
		results[i].Verdict = resp.Results[k]
	}
	s.redteams.batchDone(run)
	return nil
}

// getRedteam is GET /v1/redteam/{id}.
func (s *Server) getRedteam(c *gin.Context) {
	id := c.Param("id")
	v, ok := s.redteams.view(id)
	if !ok {
		abort(c, newError(CodeRedteamNotFound, "", "red-team run %q not found: runs are kept an hour after they end, by the gateway that ran them; their batches stay readable at GET /v1/batches/{id}", id))
		return
	}
	c.JSON(http.StatusOK, v)
}
