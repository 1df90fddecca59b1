package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/rollout/runner"
)

// sseHeartbeat is how often an idle event stream gets a comment line, so
// that proxies and load balancers do not close it between slow steps (an
// LLM call plus an evaluation can take minutes). Tests shorten it.
var sseHeartbeat = 15 * time.Second

// searchEvents is GET /v1/searches/{id}/events, Server-Sent Events: one
// "step" event per step (id: its seq), then an "end" event with the final
// status once the search has ended. A client resumes after the last seq it
// saw with Last-Event-ID (what EventSource sends on reconnect) or ?after=N.
// The stream also ends when the client leaves (the subscription is
// cancelled with the request) or the server shuts down (no end event: the
// client reconnects).
func (s *Server) searchEvents(c *gin.Context) {
	svc, ok := s.searches(c)
	if !ok {
		return
	}
	after, aerr := resumeAfter(c)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	id := c.Param("id")
	ctx, cancel := s.untilStopping(c.Request.Context())
	defer cancel() // ends the subscription however the handler returns
	events, err := svc.Subscribe(ctx, id, after)
	if err != nil {
		s.searchError(c, "subscribing to a search", err)
		return
	}
	c.Header("Content-Type", "text/event-stream")
	c.Header("Cache-Control", "no-store")
	c.Header("X-Accel-Buffering", "no") // a proxy must not hold events back
	c.Status(http.StatusOK)
	c.Writer.Flush() // the client sees 200 before the first step
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case ev, open := <-events:
			if !open {
				if ctx.Err() == nil {
					s.endEvent(c, svc, id)
				}
				return
			}
			if writeSSE(c.Writer, strconv.Itoa(ev.Seq), "step", ev) != nil {
				return // the client is gone
			}
		case <-beat.C:
			if _, err := io.WriteString(c.Writer, ": heartbeat\n\n"); err != nil {
				return
			}
			c.Writer.Flush()
		case <-ctx.Done():
			return
		}
	}
}

// endEvent writes the "end" event with the search's final status.
func (s *Server) endEvent(c *gin.Context, svc runner.Service, id string) {
	st, err := svc.Get(c.Request.Context(), id)
	if err != nil {
		if c.Request.Context().Err() == nil {
			s.log.Error("reading an ended search failed", "search_id", id, "err", err)
		}
		return // the client reconnects and asks again
	}
	_ = writeSSE(c.Writer, "", "end", st)
}

// writeSSE writes one event and flushes it. encoding/json escapes newlines
// inside strings, so the data is a single line.
func writeSSE(w gin.ResponseWriter, id, event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("gateway.writeSSE: %w", err)
	}
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", event, data)
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	w.Flush()
	return nil
}

// resumeAfter reads the seq to resume after: Last-Event-ID (a reconnecting
// EventSource keeps the URL it started with, so the header wins over the
// query), then ?after, else 0 (from the first step).
func resumeAfter(c *gin.Context) (int, *apiError) {
	field, raw := "Last-Event-ID", strings.TrimSpace(c.GetHeader("Last-Event-ID"))
	if raw == "" {
		field, raw = "after", c.Query("after")
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return 0, newError(CodeInvalidRequest, field, "%s must be a step seq (an integer >= 0), got %q", field, raw)
	}
	return n, nil
}
