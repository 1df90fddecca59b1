package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/kernelgate/kernelgate/rollout/runner"
)

// searchRequest is the body of POST /v1/searches (schema SearchRequest).
type searchRequest = runner.Request

// searchRef is the 202 of POST /v1/searches (schema SearchRef).
type searchRef struct {
	SearchID string `json:"search_id"`
	State    string `json:"state"`
	Location string `json:"location"`
}

func searchLocation(id string) string { return "/v1/searches/" + id }

func (s *Server) searchRoutes(r gin.IRoutes) {
	r.POST("/v1/searches", s.startSearch)
	r.GET("/v1/searches", s.listSearches) // searches_list.go
	r.GET("/v1/searches/:id", s.getSearch)
	r.DELETE("/v1/searches/:id", s.cancelSearch)
	r.GET("/v1/searches/:id/events", s.searchEvents) // searches_events.go
}

// searches is Deps.Searches, or a 503 when the server runs none (no LLM
// endpoint configured).
func (s *Server) searches(c *gin.Context) (runner.Service, bool) {
	if s.deps.Searches == nil {
		abort(c, newError(CodeNotReady, "", "searches are not configured on this server (start it with an LLM endpoint, --llm-url)"))
		return nil, false
	}
	return s.deps.Searches, true
}

// startSearch is POST /v1/searches: the runner validates and starts the
// search in the background; 202 with its id and Location.
func (s *Server) startSearch(c *gin.Context) {
	svc, ok := s.searches(c)
	if !ok {
		return
	}
	body, aerr := readBody(c.Writer, c.Request, s.cfg.MaxBodyBytes)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	// The options first, as in every other request: omitted fields take this
	// server's defaults (decoding into runner.Request would leave them zero;
	// leaving them out, the runner's harness defaults, which ignore the
	// caps), a bad one is invalid_options and one above a cap option_above_cap.
	var raw struct {
		Options json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		abort(c, newError(CodeBadJSON, "", "malformed JSON: %v", err))
		return
	}
	opts, aerr := s.cfg.parseOptions(raw.Options)
	if aerr != nil {
		abort(c, aerr)
		return
	}
	var req searchRequest
	// Decode errors name fields and types, never values: no key leaks here.
	if aerr := decodeBody(body, &req); aerr != nil {
		abort(c, aerr)
		return
	}
	req.Options = &opts
	st, err := svc.Start(c.Request.Context(), req)
	switch {
	case errors.Is(err, runner.ErrTaskNotFound): // 404, as everywhere else a task_id is unknown
		abort(c, newError(CodeTaskNotFound, "task_id", "%s", redact(err.Error(), req.LLM.APIKey)))
		return
	case errors.Is(err, runner.ErrBadRequest):
		abort(c, newError(CodeInvalidRequest, "", "%s", redact(err.Error(), req.LLM.APIKey)))
		return
	case err != nil:
		s.searchFailed(c, "starting a search", "", err, req.LLM.APIKey)
		return
	}
	s.log.Info("search started", "search_id", st.SearchID, "task_id", st.TaskID, "policy", st.Policy,
		"steps", st.StepsBudget, "caller", c.GetString(callerKey))
	loc := searchLocation(st.SearchID)
	c.Header("Location", loc)
	c.JSON(http.StatusAccepted, searchRef{SearchID: st.SearchID, State: runner.StateRunning, Location: loc})
}

// getSearch is GET /v1/searches/{id}: status, best kernel, tree summary.
func (s *Server) getSearch(c *gin.Context) {
	svc, ok := s.searches(c)
	if !ok {
		return
	}
	st, err := svc.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.searchError(c, "reading a search", err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// cancelSearch is DELETE /v1/searches/{id}: 200 with the status (an ended
// search's, unchanged).
func (s *Server) cancelSearch(c *gin.Context) {
	svc, ok := s.searches(c)
	if !ok {
		return
	}
	st, err := svc.Cancel(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.searchError(c, "cancelling a search", err)
		return
	}
	s.log.Info("search cancel requested", "search_id", st.SearchID, "state", st.State, "caller", c.GetString(callerKey))
	c.JSON(http.StatusOK, st)
}

// searchError answers a runner error about the search in the path.
func (s *Server) searchError(c *gin.Context, what string, err error) {
	id := c.Param("id")
	if errors.Is(err, runner.ErrNotFound) {
		abort(c, newError(CodeSearchNotFound, "id", "no search %q", id))
		return
	}
	s.searchFailed(c, what, id, err, "")
}

// searchFailed logs an unexpected runner error and answers 500 without it.
func (s *Server) searchFailed(c *gin.Context, what, id string, err error, key string) {
	if c.Request.Context().Err() != nil {
		return // the client left; nobody reads the answer
	}
	s.log.Error(what+" failed", "search_id", id, "err", redact(err.Error(), key))
	abort(c, newError(CodeInternal, "", "%s failed; see the server's log", what))
}

// redact removes the request's LLM key from a message a runner wrote: the
// key is never echoed nor logged, whatever the runner puts in its errors.
func redact(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[redacted]")
}
