package gateway

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/gateway/ui/overview"

	"github.com/kernelgate/kernelgate/bus"
)

// Pages of GET /v1/batches.
const (
	defaultBatchPage = 50
	maxBatchPage     = 200
	// maxStatusReads bounds the batches whose results one list request
	// reads to learn their status (a status filter that matches few):
	// the page stops there and next_before says where to go on.
	maxStatusReads = 500
	// recordReaders read batch records side by side on a first listing.
	recordReaders = 16
)

// batchSummary and batchList are GET /v1/batches' body, shared with the
// dashboard that reads it.
type (
	batchSummary = overview.BatchSummary
	batchList    = overview.BatchList
)

// batchIndex remembers what listing needs: batch records (written once)
// and the summaries of batches that ended (they do not change). Both are
// pruned to the batches the store still holds.
type batchIndex struct {
	mu    sync.Mutex
	recs  map[string]batchRecord
	ended map[string]batchSummary
}

// listBatches is GET /v1/batches?status=&task=&limit=&before=: the stored
// batches newest first (created_at, then id), a page at a time.
func (s *Server) listBatches(c *gin.Context) {
	q, aerr := batchQuery(c)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*s.cfg.StoreWait)
	defer cancel()
	recs, aerr := s.batchRecords(ctx)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	start := 0
	if q.before != "" {
		i := slices.IndexFunc(recs, func(r batchRecord) bool { return r.ID == q.before })
		if i < 0 { // a well-formed id the store does not hold (any more: results live ResultTTL)
			abort(c, newError(CodeBatchNotFound, "before", "before %q is no stored batch (unknown, or older than the result TTL)", q.before))
			return
		}
		start = i + 1
	}
	out := batchList{Batches: []batchSummary{}}
	reads := 0
	for _, rec := range recs[start:] {
		if q.task != "" && rec.TaskName != q.task && rec.TaskHash != q.task {
			continue
		}
		if len(out.Batches) == q.limit || reads == maxStatusReads {
			out.NextBefore = out.Batches[len(out.Batches)-1].BatchID
			if len(out.Batches) == 0 {
				out.NextBefore = rec.ID
			}
			break
		}
		sum, read, aerr := s.summary(ctx, rec)
		if aerr != nil {
			abort(c, aerr)
			return
		}
		if read {
			reads++
		}
		if q.status == "" || sum.Status == q.status {
			out.Batches = append(out.Batches, sum)
		}
	}
	c.JSON(http.StatusOK, out)
}

type batchListQuery struct {
	status, task, before string
	limit                int
}

func batchQuery(c *gin.Context) (batchListQuery, *apiError) {
	q := batchListQuery{task: strings.TrimSpace(c.Query("task")), limit: defaultBatchPage}
	status, hasStatus := c.GetQuery("status")
	if statuses := []string{statusRunning, statusDone, statusLost}; hasStatus && !slices.Contains(statuses, status) {
		return q, newError(CodeInvalidRequest, "status", "status must be one of %s, got %q", strings.Join(statuses, ", "), status)
	}
	before, hasBefore := c.GetQuery("before")
	q.status, q.before = status, before
	if hasBefore && !bus.ValidID(before) {
		return q, newError(CodeInvalidRequest, "before", "before must be a batch id (1 to 64 letters, digits, _ or -: a page's next_before), got %q", q.before)
	}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxBatchPage {
			return q, newError(CodeInvalidRequest, "limit", "limit must be an integer in 1..%d, got %q", maxBatchPage, l)
		}
		q.limit = n
	}
	return q, nil
}

// batchRecords are the stored batches' records, newest first; those not
// read before are read now, side by side.
func (s *Server) batchRecords(ctx context.Context) ([]batchRecord, *apiError) {
	ids, err := s.evals.Batches(ctx)
	if err != nil {
		s.log.Error("listing batches failed", "err", err)
		return nil, submitError(err)
	}
	ix := &s.batchIndex
	ix.mu.Lock()
	if ix.recs == nil {
		ix.recs, ix.ended = map[string]batchRecord{}, map[string]batchSummary{}
	}
	stored := make(map[string]bool, len(ids))
	var unknown []string
	for _, id := range ids {
		stored[id] = true
		if _, ok := ix.recs[id]; !ok {
			unknown = append(unknown, id)
		}
	}
	for id := range ix.recs { // expired from the store
		if !stored[id] {
			delete(ix.recs, id)
			delete(ix.ended, id)
		}
	}
	ix.mu.Unlock()
	if aerr := s.readRecords(ctx, unknown); aerr != nil {
		return nil, aerr
	}
	ix.mu.Lock()
	out := make([]batchRecord, 0, len(ids))
	for _, id := range ids {
		if r, ok := ix.recs[id]; ok {
			out = append(out, r)
		}
	}
	ix.mu.Unlock()
	slices.SortFunc(out, func(a, b batchRecord) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out, nil
}

// readRecords reads ids' records into the index; one gone meanwhile
// (expired) or malformed is left out.
func (s *Server) readRecords(ctx context.Context, ids []string) *apiError {
	var (
		mu    sync.Mutex
		first *apiError
		wg    sync.WaitGroup
		next  = make(chan string)
	)
	for range min(recordReaders, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				rec, aerr := s.record(ctx, id, CodeBatchNotFound)
				mu.Lock()
				switch {
				case aerr == nil:
					s.batchIndex.mu.Lock()
					s.batchIndex.recs[id] = rec
					s.batchIndex.mu.Unlock()
				case aerr.status >= 500 && first == nil:
					first = aerr
				}
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	return first
}

// summary is rec's batch as listed; read says whether its results were
// read (a batch that ended is remembered).
func (s *Server) summary(ctx context.Context, rec batchRecord) (batchSummary, bool, *apiError) {
	s.batchIndex.mu.Lock()
	sum, ok := s.batchIndex.ended[rec.ID]
	s.batchIndex.mu.Unlock()
	if ok {
		return sum, false, nil
	}
	b, aerr := s.readResults(ctx, rec)
	if aerr != nil {
		return sum, true, aerr
	}
	sum = batchSummary{BatchID: b.BatchID, Status: b.Status, Done: b.Done, Total: b.Total, CreatedAt: rec.CreatedAt,
		TaskName: rec.TaskName, TaskHash: rec.TaskHash, RewardFn: rec.RewardFn, Location: batchLocation(rec.ID)}
	var total float64
	for i, r := range b.Rewards {
		if r != nil {
			total += *r
			if v := b.Results[i]; v != nil && v.Status == "correct" {
				sum.Correct++
			}
		}
	}
	if b.Done > 0 {
		m := total / float64(b.Done)
		sum.MeanReward = &m
	}
	if b.complete() {
		s.batchIndex.mu.Lock()
		s.batchIndex.ended[rec.ID] = sum
		s.batchIndex.mu.Unlock()
	}
	return sum, true, nil
}
