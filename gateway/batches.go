package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
)

// Batch statuses (schema Batch).
const (
	statusRunning = "running"
	statusDone    = "done"
	// statusLost: every item ended, and some were lost from the store with
	// nothing left to answer them (dispatch/settle.go); LostItems says which.
	statusLost = "lost"
)

// batchRecord is stored on the bus under the batch id once every item of
// the batch is queued (or answered); results are stored beside it.
type batchRecord struct {
	ID        string    `json:"id"`
	Total     int       `json:"total"`
	CreatedAt time.Time `json:"created_at"`
	TaskName  string    `json:"task_name"`
	TaskHash  string    `json:"task_hash"`
	RewardFn  string    `json:"reward_fn"`
}

// newID names a batch: prefix (b_ for reward batches, e_ for evaluations)
// and 26 random base32 characters, a valid bus.ValidID.
func newID(prefix string) string { return prefix + rand.Text() }

func batchLocation(id string) string { return "/v1/batches/" + id }

// batchResponse is a batch's state (schema Batch): the body of GET
// /v1/batches/{id} and the 200 of POST /v1/rewards.
type batchResponse struct {
	BatchID   string          `json:"batch_id"`
	Status    string          `json:"status"`
	Done      int             `json:"done"`
	Total     int             `json:"total"`
	CreatedAt time.Time       `json:"created_at"`
	TaskName  string          `json:"task_name"`
	RewardFn  string          `json:"reward_fn"`
	Rewards   []*float64      `json:"rewards"`
	Results   []*eval.Verdict `json:"results"`
	Cached    []*bool         `json:"cached"`
	// Shared is true where the item ran nothing of its own: it got the
	// verdict of an identical evaluation in flight (dispatch/submit.go).
	Shared []*bool `json:"shared"`
	// Valid is false where the reward function says "not the candidate's
	// fault: exclude this sample" (harness_error, a task error); Notes say why
	// (reward/README.md). A trainer drops such samples from loss and baseline.
	Valid []*bool   `json:"valid"`
	Notes []*string `json:"notes"`
	// MakespanMS and SlowestExecMS, once every item is in: the largest
	// queue wait + run of an item (its finish, counted from the batch's
	// creation on the workers' clocks) and the longest run. A trainer's step
	// waits for the first; it can only wait less if the group's items run
	// side by side. Items answered without running count 0.
	MakespanMS    *float64 `json:"makespan_ms,omitempty"`
	SlowestExecMS *float64 `json:"slowest_exec_ms,omitempty"`
	// LostItems are the items whose job and result the store lost, never
	// logged: each is answered harness_error with retry "lost". FromLog are
	// those whose stored result was lost and whose verdict was read back
	// from the evaluation log.
	LostItems []int `json:"lost_items,omitempty"`
	FromLog   []int `json:"from_log,omitempty"`

	items []*dispatch.Result // what came in, by index
}

func newBatchResponse(rec batchRecord) *batchResponse {
	return &batchResponse{
		BatchID: rec.ID, Status: statusRunning, Total: rec.Total, CreatedAt: rec.CreatedAt,
		TaskName: rec.TaskName, RewardFn: rec.RewardFn,
		Rewards: make([]*float64, rec.Total), Results: make([]*eval.Verdict, rec.Total),
		Cached: make([]*bool, rec.Total), Shared: make([]*bool, rec.Total),
		Valid: make([]*bool, rec.Total), Notes: make([]*string, rec.Total),
		items: make([]*dispatch.Result, rec.Total),
	}
}

// add fills r's slot, unless it is out of range or already filled.
func (b *batchResponse) add(r dispatch.Result) {
	if r.Index < 0 || r.Index >= b.Total || b.items[r.Index] != nil {
		return
	}
	b.items[r.Index] = &r
	b.Rewards[r.Index], b.Results[r.Index], b.Cached[r.Index] = &r.Reward, &r.Verdict, &r.Cached
	b.Shared[r.Index] = &r.Shared
	b.Valid[r.Index], b.Notes[r.Index] = &r.Valid, &r.Note
	if r.Lost {
		b.LostItems = append(b.LostItems, r.Index)
	}
	if r.FromLog {
		b.FromLog = append(b.FromLog, r.Index)
	}
	b.Done++
	if b.Done == b.Total {
		b.Status = statusDone
		if len(b.LostItems) > 0 {
			b.Status = statusLost
		}
		slices.Sort(b.LostItems)
		slices.Sort(b.FromLog)
		var makespan, slowest float64
		for _, it := range b.items {
			makespan, slowest = max(makespan, it.QueueWaitMS+it.ExecMS), max(slowest, it.ExecMS)
		}
		b.MakespanMS, b.SlowestExecMS = &makespan, &slowest
	}
}

func (b *batchResponse) complete() bool { return b.Done == b.Total }

// batchRef is the 202 of POST /v1/rewards (schema BatchRef).
type batchRef struct {
	BatchID  string `json:"batch_id"`
	Status   string `json:"status"`
	Done     int    `json:"done"`
	Total    int    `json:"total"`
	Location string `json:"location"`
}

func (b *batchResponse) ref() batchRef {
	return batchRef{BatchID: b.BatchID, Status: statusRunning, Done: b.Done, Total: b.Total, Location: batchLocation(b.BatchID)}
}

// record reads batch id's record; an unknown (or malformed, or expired) id
// is a 404 with code.
func (s *Server) record(ctx context.Context, id string, code Code) (batchRecord, *apiError) {
	var rec batchRecord
	data, ok, err := s.evals.Record(ctx, id)
	if err != nil {
		s.log.Error("reading a batch record failed", "batch", id, "err", err)
		return rec, submitError(err)
	}
	if !ok {
		return rec, newError(code, "id", "no batch or evaluation %q (unknown, or older than the result TTL)", id)
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Total < 1 {
		s.log.Error("malformed batch record", "batch", id, "err", err)
		return rec, newError(CodeInternal, "", "batch %s: malformed record", id)
	}
	return rec, nil
}

// loadBatch reads batch id's record and every result stored so far, within
// StoreWait: a store that does not answer is 503 with Retry-After, not a
// request that hangs. A batch that made no progress for a while is
// checked for items nothing can answer any more (settle.go).
func (s *Server) loadBatch(ctx context.Context, id string, code Code) (*batchResponse, *apiError) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreWait)
	defer cancel()
	rec, aerr := s.record(ctx, id, code)
	if aerr != nil {
		return nil, aerr
	}
	read := time.Now()
	resp, aerr := s.readResults(ctx, rec)
	if aerr != nil || !s.evals.Stalled(id, resp.Done, resp.Total, rec.CreatedAt) {
		return resp, aerr
	}
	if !s.settle(ctx, rec, read) {
		return resp, nil
	}
	if again, aerr := s.readResults(ctx, rec); aerr == nil {
		resp = again
	}
	return resp, nil
}

// readResults is rec's batch with every result stored so far.
func (s *Server) readResults(ctx context.Context, rec batchRecord) (*batchResponse, *apiError) {
	stored, err := s.evals.Results(ctx, rec.ID, rec.Total)
	if err != nil {
		s.log.Error("reading results failed", "batch", rec.ID, "err", err)
		return nil, submitError(err)
	}
	resp := newBatchResponse(rec)
	for _, r := range stored {
		resp.add(r)
	}
	return resp, nil
}

// getBatch is GET /v1/batches/{id}.
func (s *Server) getBatch(c *gin.Context) {
	resp, aerr := s.loadBatch(c.Request.Context(), c.Param("id"), CodeBatchNotFound)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	c.JSON(http.StatusOK, resp)
}
