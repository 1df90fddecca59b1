package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/bus"
)

// A client that retries a POST (a timeout, a dropped connection, a trainer's
// retry loop) must not get its completions evaluated and logged twice. With
// an Idempotency-Key header, or else the X-Request-ID it sent, the first
// request claims the key and a repeat within the result TTL is answered from
// the batch the first one made: the same batch id and verdicts, nothing
// queued, nothing logged again. The same key with another body is refused.
// Keys are per client (API key) and per endpoint.

const (
	idempotencyHeader = "Idempotency-Key"
	replayedHeader    = "Idempotent-Replayed"
	maxKeyLen         = 255
	// acceptWait bounds how long a repeat waits for the first request to
	// finish queueing its batch (it stores the batch record last).
	acceptWait = 30 * time.Second
)

// requestClaim is what the requests bucket holds under a key.
type requestClaim struct {
	BatchID string `json:"batch_id"`
	Body    string `json:"body_sha256"`
}

// idempotencyKey is the bus key of this request's claim, "" when the client
// named no key.
func idempotencyKey(c *gin.Context, endpoint string) (string, *apiError) {
	id := identityOf(c.Request.Context())
	key := c.GetHeader(idempotencyHeader)
	switch {
	case key != "" || len(c.Request.Header.Values(idempotencyHeader)) > 0:
		if key == "" || len(key) > maxKeyLen || !printable(key) {
			return "", newError(CodeInvalidRequest, idempotencyHeader,
				"%s must be 1 to %d printable ASCII characters", idempotencyHeader, maxKeyLen)
		}
	case id.sent:
		key = id.requestID
	default:
		return "", nil
	}
	h := sha256.Sum256([]byte(id.clientID + "\x00" + endpoint + "\x00" + key))
	return "k_" + hex.EncodeToString(h[:20]), nil
}

func printable(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// claim makes batch id the answer to key, or returns the batch an earlier
// request with key made ("" when this request is the first).
func (s *Server) claim(ctx context.Context, key string, body []byte, id string) (string, *apiError) {
	sum := sha256.Sum256(body)
	mine := requestClaim{BatchID: id, Body: hex.EncodeToString(sum[:])}
	data, err := json.Marshal(mine)
	if err != nil {
		return "", newError(CodeInternal, "", "encoding a request claim: %v", err)
	}
	for try := 0; try < 2; try++ { // a second try when the first claim expired in between
		_, err = s.deps.Bus.Requests().Create(ctx, key, data)
		if err == nil {
			return "", nil
		}
		if !errors.Is(err, bus.ErrKeyExists) {
			break
		}
		var prior requestClaim
		old, _, ok, gerr := s.deps.Bus.Requests().Get(ctx, key)
		if err = gerr; err != nil {
			break
		}
		if !ok {
			continue
		}
		if json.Unmarshal(old, &prior) != nil || prior.BatchID == "" {
			s.log.Error("malformed request claim", "key", key)
			return "", newError(CodeInternal, "", "malformed request claim")
		}
		if prior.Body != mine.Body {
			return "", newError(CodeKeyReused, idempotencyHeader, "this key was used within the result TTL for a request with another body (batch %s); use a new key for a new request", prior.BatchID)
		}
		return prior.BatchID, nil
	}
	s.log.Error("claiming an idempotency key failed", "err", err)
	return "", storeError(err, "the result store")
}

// unclaim forgets key after its request failed before its batch existed, so
// that a retry runs it.
func (s *Server) unclaim(ctx context.Context, key string) {
	if err := s.deps.Bus.Requests().Delete(context.WithoutCancel(ctx), key); err != nil {
		s.log.Warn("forgetting an idempotency key failed; a retry within the result TTL will answer request_in_progress", "err", err)
	}
}

// replay answers a repeated request from batch id: once the first request
// has stored the batch (up to acceptWait), it waits up to wait for the
// verdicts, as the first request did.
func (s *Server) replay(ctx context.Context, id string, wait time.Duration) (*batchResponse, *apiError) {
	deadline := time.Now().Add(min(acceptWait, max(wait, time.Second)))
	for {
		rec, aerr := s.record(ctx, id, CodeBatchNotFound)
		if aerr == nil {
			return s.await(ctx, id, rec.Total, wait)
		}
		if aerr.Code != CodeBatchNotFound {
			return nil, aerr
		}
		if !time.Now().Before(deadline) {
			return nil, newError(CodeInProgress, idempotencyHeader, "the first request with this key is still queueing batch %s; retry later", id)
		}
		select {
		case <-ctx.Done():
			return nil, newError(CodeInProgress, idempotencyHeader, "the first request with this key is still queueing batch %s", id)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// await reads stored batch id and waits up to wait for the rest of its verdicts.
func (s *Server) await(ctx context.Context, id string, total int, wait time.Duration) (*batchResponse, *apiError) {
	// Subscribe before reading: a result stored after the read is announced after it.
	f, err := s.evals.Follow(ctx, id, total)
	if err != nil {
		s.log.Error("subscribe failed", "batch", id, "err", err)
		return nil, submitError(err)
	}
	defer f.Close()
	resp, aerr := s.loadBatch(ctx, id, CodeBatchNotFound)
	if aerr != nil || resp.complete() || wait == 0 {
		return resp, aerr
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	wctx, cancelStop := s.untilStopping(wctx)
	defer cancelStop()
	for !resp.complete() {
		r, err := f.Next(wctx) // stored ones come again first: add keeps the first of each
		if err != nil {
			break
		}
		resp.add(r)
	}
	return resp, nil
}

// submit runs spec as a new batch id, or, when the request names an
// idempotency key used before, answers from that key's batch.
func (s *Server) submit(c *gin.Context, endpoint, id string, body []byte, spec batchSpec) (*batchResponse, *apiError) {
	ctx := c.Request.Context()
	key, aerr := idempotencyKey(c, endpoint)
	if aerr != nil {
		return nil, aerr
	}
	if key != "" {
		prior, aerr := s.claim(ctx, key, body, id)
		if aerr != nil {
			return nil, aerr
		}
		if prior != "" {
			c.Header(replayedHeader, "true")
			return s.replay(ctx, prior, spec.wait)
		}
	}
	resp, aerr := s.runBatch(ctx, id, spec)
	if aerr != nil && key != "" {
		s.unclaim(ctx, key)
	}
	return resp, aerr
}
