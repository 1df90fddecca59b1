package gateway

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/gateway/ui/overview"
)

// The slowest tasks are kept here, in memory, over the last slowestRuns
// evaluations this gateway counted, and served as JSON (GET
// /v1/stats/slowest-tasks): task ids are unbounded, so they never become
// Prometheus labels, whose series would outlive every task that once
// ranked. Each result is counted by one gateway (metricsQueue), so with
// several gateways each ranks its share.
const (
	slowestRuns         = 2048
	defaultSlowestLimit = 10
	maxSlowestLimit     = 100
	maxTaskNameLen      = 128         // the verdict's task_name comes from the sandboxed child
	taskIDMemo          = time.Minute // how long a hash's registry id is remembered
)

// slowRun is one evaluation's run time and its wait in the queue.
type slowRun struct {
	hash, name string
	ms, waitMS float64
	at         time.Time
}

// slowest is a ring of the latest runs and what ranks them.
type slowest struct {
	mu   sync.Mutex
	runs []slowRun
	next int // where the next run goes once runs is full
	now  func() time.Time
	ids  map[string]memoID // task hash → registry id ("" none), for taskIDMemo
}

type memoID struct {
	id string
	at time.Time
}

func newSlowest(n int, now func() time.Time) *slowest {
	return &slowest{runs: make([]slowRun, 0, n), now: now, ids: map[string]memoID{}}
}

func (s *slowest) add(hash, name string, ms, waitMS float64) {
	if hash == "" || math.IsNaN(ms) || math.IsInf(ms, 0) || ms <= 0 {
		return
	}
	if r := []rune(name); len(r) > maxTaskNameLen {
		name = string(r[:maxTaskNameLen])
	}
	run := slowRun{hash: hash, name: name, ms: ms, waitMS: waitMS, at: s.now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.runs) < cap(s.runs) {
		s.runs = append(s.runs, run)
		return
	}
	s.runs[s.next] = run
	s.next = (s.next + 1) % len(s.runs)
}

// slowTask and slowestTasks are the body of GET /v1/stats/slowest-tasks
// (schemas SlowTask, SlowestTasks): the types the dashboard and `kernelgate
// top` decode it into, so the server and its readers cannot drift apart.
type (
	slowTask     = overview.SlowTask
	slowestTasks = overview.Slowest
)

// top ranks the tasks of the kept runs by their median run time, slowest
// first (ties: the larger maximum, then the hash): one timeout does not make
// a task slow, a task whose evaluations are slow does.
func (s *slowest) top(n int) slowestTasks {
	s.mu.Lock()
	runs := slices.Clone(s.runs)
	s.mu.Unlock()
	out := slowestTasks{Runs: len(runs), Tasks: []slowTask{}}
	byHash := map[string][]slowRun{}
	execS, waitS := make([]float64, len(runs)), make([]float64, len(runs))
	for i, r := range runs {
		execS[i], waitS[i] = r.ms/1000, r.waitMS/1000
		byHash[r.hash] = append(byHash[r.hash], r)
		if out.Since == nil || r.at.Before(*out.Since) {
			at := r.at
			out.Since = &at
		}
	}
	out.Exec, out.QueueWait = overview.MeasuredOf(execS), overview.MeasuredOf(waitS)
	for hash, rs := range byHash {
		ms := make([]float64, len(rs))
		t := slowTask{TaskHash: hash, Evaluations: len(rs)}
		for i, r := range rs {
			ms[i] = r.ms
			if !r.at.Before(t.LastAt) {
				t.LastAt, t.TaskName = r.at, r.name
			}
		}
		slices.Sort(ms)
		t.MedianExecS, t.MaxExecS = median(ms)/1000, ms[len(ms)-1]/1000
		out.Tasks = append(out.Tasks, t)
	}
	slices.SortFunc(out.Tasks, func(a, b slowTask) int {
		return cmp.Or(cmp.Compare(b.MedianExecS, a.MedianExecS), cmp.Compare(b.MaxExecS, a.MaxExecS), cmp.Compare(a.TaskHash, b.TaskHash))
	})
	if len(out.Tasks) > n {
		out.Tasks = out.Tasks[:n]
	}
	return out
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// withIDs fills each task's registry id: the smallest id whose source has
// its hash. The ids are remembered for taskIDMemo, so a dashboard polling
// every 2 s does not list the task store each time.
func (s *slowest) withIDs(ctx context.Context, ts []slowTask, list func(context.Context) (map[string]string, error)) error {
	now := s.now()
	s.mu.Lock()
	stale := false
	for _, t := range ts {
		m, ok := s.ids[t.TaskHash]
		stale = stale || !ok || now.Sub(m.at) > taskIDMemo
	}
	s.mu.Unlock()
	if stale {
		ids, err := list(ctx)
		if err != nil {
			return err
		}
		s.mu.Lock()
		clear(s.ids) // only the hashes asked for now stay: the memo is bounded by the limit
		for _, t := range ts {
			s.ids[t.TaskHash] = memoID{id: ids[t.TaskHash], at: now}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range ts {
		ts[i].TaskID = s.ids[ts[i].TaskHash].id
	}
	return nil
}

// taskIDsByHash maps each registered task's hash to its smallest id.
func (s *Server) taskIDsByHash(ctx context.Context) (map[string]string, error) {
	all, err := s.deps.Tasks.List(ctx) // sorted by id: the first of a hash is the smallest
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(all))
	for _, t := range all {
		if _, ok := out[t.TaskHash]; !ok {
			out[t.TaskHash] = t.ID
		}
	}
	return out, nil
}

// slowestTasks serves GET /v1/stats/slowest-tasks?limit=N.
func (s *Server) slowestTasks(c *gin.Context) {
	limit := defaultSlowestLimit
	if l, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxSlowestLimit {
			abort(c, newError(CodeInvalidRequest, "limit", "limit must be an integer in 1..%d, got %q", maxSlowestLimit, l))
			return
		}
		limit = n
	}
	tr := s.metrics.verdicts.slowest
	out := tr.top(limit)
	if err := tr.withIDs(c.Request.Context(), out.Tasks, s.taskIDsByHash); err != nil {
		// The ranking stands without ids: the hashes still say which task.
		s.log.Warn("slowest tasks: the task registry cannot be read; ids left out", "err", err)
	}
	c.JSON(http.StatusOK, out)
}
