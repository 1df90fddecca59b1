package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/export/dataset"
	"github.com/kernelgate/kernelgate/gateway/history"
)

// The gateway's history (gateway/history) is fed here: each result the
// observer counts (metricsQueue: one gateway per result), a sample of the
// queue and the GPUs every historySample, and at start the day read back
// from the Parquet log. GET /v1/stats/history serves it.
const (
	historySample = history.FineStep
	historySave   = time.Minute
	// historySamples is the file under the data directory that keeps the
	// queue and GPU samples across a restart (they are in no log).
	historySamples = "history/samples.json"
	// maxRecordMemo bounds the batches whose reward function is remembered.
	maxRecordMemo = 4096
)

// batchMemo remembers what the history needs of a batch's record: its
// reward function is not in the result. A batch's record is stored once
// all its items are queued, so a fast worker's first results can come
// before it: those wait (waiting, bounded) and are tried again at each
// sample, then counted without a reward after maxRecordWait.
type batchMemo struct {
	mu      sync.Mutex
	recs    map[string]batchRecord
	waiting []waitingResult
}

type waitingResult struct {
	r  dispatch.Result
	at time.Time
}

const (
	maxRecordWait = time.Minute
	maxWaiting    = 10000
)

// historyAdd counts one observed result.
func (s *Server) historyAdd(r dispatch.Result) {
	if r.Verdict.TaskInfo != nil {
		return // a task check: the reference's run, not a candidate's
	}
	s.historyAddAt(r, time.Now(), false)
}

// historyAddAt counts r as observed at at; unless final, one whose batch
// record is not there yet waits for it.
func (s *Server) historyAddAt(r dispatch.Result, at time.Time, final bool) {
	e := history.Eval{At: at, Status: string(r.Verdict.Status), TaskHash: r.Verdict.TaskHash, TaskName: r.Verdict.TaskName,
		HackFlags: r.Verdict.HackFlags, Speedup: r.Verdict.Speedup}
	rec, ok := s.batchOf(r.ID)
	if !ok && !final && hasRecord(r.ID) {
		m := &s.batchMemo
		m.mu.Lock()
		if len(m.waiting) < maxWaiting {
			m.waiting = append(m.waiting, waitingResult{r, at})
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
	if ok {
		e.RewardFn = rec.RewardFn
		reward := r.Reward
		e.Reward = &reward
	}
	s.history.Add(e)
	if ok && !final && s.hasWaiting() {
		s.retryWaiting() // records are being stored: those waiting may have theirs now
	}
}

func (s *Server) hasWaiting() bool {
	s.batchMemo.mu.Lock()
	defer s.batchMemo.mu.Unlock()
	return len(s.batchMemo.waiting) > 0
}

// hasRecord: eval id belongs to a batch the gateway stores a record of
// (POST /v1/rewards and /v1/evaluations, episodes; dispatch.EvalID of a
// newID "b_" or "e_"); a search's evaluations, say, have none to wait for.
func hasRecord(evalID string) bool {
	return strings.HasPrefix(evalID, "b_") || strings.HasPrefix(evalID, "e_")
}

// retryWaiting counts the results that waited for their batch's record:
// with it when it is there now, without a reward when they waited long.
func (s *Server) retryWaiting() {
	m := &s.batchMemo
	m.mu.Lock()
	ws := m.waiting
	m.waiting = nil
	m.mu.Unlock()
	for _, w := range ws {
		s.historyAddAt(w.r, w.at, time.Since(w.at) > maxRecordWait)
	}
}

// batchOf reads the record of the batch eval id belongs to
// (dispatch.EvalID: "<batch>-<index>"), remembered once read.
func (s *Server) batchOf(evalID string) (batchRecord, bool) {
	i := strings.LastIndexByte(evalID, '-')
	if i <= 0 {
		return batchRecord{}, false
	}
	id := evalID[:i]
	m := &s.batchMemo
	m.mu.Lock()
	rec, ok := m.recs[id]
	m.mu.Unlock()
	if ok {
		return rec, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	data, ok, err := s.evals.Record(ctx, id)
	if err != nil || !ok || json.Unmarshal(data, &rec) != nil {
		return batchRecord{}, false
	}
	m.mu.Lock()
	if m.recs == nil || len(m.recs) >= maxRecordMemo {
		m.recs = map[string]batchRecord{}
	}
	m.recs[id] = rec
	m.mu.Unlock()
	return rec, true
}

// startHistory loads the saved samples, rebuilds the day from the log (in
// the background: a large log must not hold the listener back; what is
// observed meanwhile is counted live and left out of the rebuild) and
// samples the queue and GPUs until the returned stop, which saves them.
func (s *Server) startHistory(ctx context.Context) (stop func()) {
	dir := s.deps.Exports.DataDir
	samples := ""
	if dir != "" {
		samples = filepath.Join(dir, historySamples)
		if err := s.history.Load(samples); err != nil {
			s.log.Warn("history: the saved queue and GPU samples do not read; starting without them", "err", err)
		}
	}
	live := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if dir == "" {
			return
		}
		got, err := s.history.Rebuild(filepath.Join(dir, dataset.LogDir), live, s.log)
		if err != nil {
			s.log.Warn("history: reading the evaluation log back failed", "err", err)
			return
		}
		s.log.Info("history: read the day back from the evaluation log", "rows", got.Rows, "files", got.Files, "ms", got.MS)
	}()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(historySample)
		defer tick.Stop()
		saved := time.Now()
		for {
			s.historySample(ctx)
			s.retryWaiting()
			if samples != "" && time.Since(saved) >= historySave {
				s.saveHistory(samples)
				saved = time.Now()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		s.retryWaiting()
		if samples != "" {
			s.saveHistory(samples)
		}
	}
}

func (s *Server) saveHistory(path string) {
	if err := s.history.Save(path); err != nil {
		s.log.Warn("history: saving the queue and GPU samples failed", "err", err)
	}
}

// historySample records the queue depth and the GPUs now.
func (s *Server) historySample(ctx context.Context) {
	var depth *float64
	if s.deps.Bus != nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		n, err := s.deps.Bus.QueueDepth(rctx)
		cancel()
		if err == nil {
			d := float64(n)
			depth = &d
		}
	}
	var gpus []history.GPU
	if s.deps.GPUs != nil {
		for _, g := range sampleGPUs(s.deps.GPUs).GPUs {
			h := history.GPU{Index: g.Index}
			if g.UtilizationPercent != nil {
				u := float64(*g.UtilizationPercent)
				h.UtilPercent = &u
			}
			if g.MemoryUsedBytes != nil {
				m := float64(*g.MemoryUsedBytes)
				h.MemoryUsedBytes = &m
			}
			gpus = append(gpus, h)
		}
	}
	s.history.Sample(time.Now(), depth, gpus)
}

// statsHistory is GET /v1/stats/history?window=1h|24h (schema History).
func (s *Server) statsHistory(c *gin.Context) {
	window := c.DefaultQuery("window", "1h")
	v, err := s.history.View(window)
	if err != nil {
		abort(c, newError(CodeInvalidRequest, "window", "%s", err.Error()))
		return
	}
	if err := s.fillTaskIDs(c.Request.Context(), v.Tasks); err != nil {
		s.log.Warn("history: the task registry cannot be read; ids left out", "err", err)
	}
	body, err := v.JSON()
	if err != nil {
		abort(c, newError(CodeInternal, "", "encoding the history failed"))
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

// fillTaskIDs gives the tasks counted live (whose results carry no id)
// their registry id, remembered as the slowest tasks' are.
func (s *Server) fillTaskIDs(ctx context.Context, ts []history.Task) error {
	var missing []slowTask
	for _, t := range ts {
		if t.TaskID == "" {
			missing = append(missing, slowTask{TaskHash: t.TaskHash})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := s.historyIDs.withIDs(ctx, missing, s.taskIDsByHash); err != nil {
		return err
	}
	ids := map[string]string{}
	for _, m := range missing {
		ids[m.TaskHash] = m.TaskID
	}
	for i := range ts {
		if ts[i].TaskID == "" {
			ts[i].TaskID = ids[ts[i].TaskHash]
		}
	}
	return nil
}
