package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is a running scripted server; it stops when the test ends.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{} // closed at Close: releases hanging and delayed answers
	once sync.Once

	mu          sync.Mutex
	scripts     []Script
	used        []int
	reqs        []Request
	inFlight    int
	maxInFlight int
}

// New starts a server answering from scripts (more can be added with Add).
func New(t testing.TB, scripts ...Script) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{})}
	s.Add(scripts...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL is the OpenAI base URL (ending in /v1), as llm.Config.BaseURL wants it.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Add appends script entries; they answer after the existing ones.
func (s *Server) Add(scripts ...Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, scripts...)
	s.used = append(s.used, make([]int, len(scripts))...)
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// MaxInFlight is the most requests the server was handling at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// InFlight is how many requests the server is handling now (a cancelled
// client's request leaves it once the server notices the disconnect).
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Close stops the server, releasing hanging answers first (httptest's Close
// waits for every handler). Later requests find a closed port. Idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "llmtest serves only POST /v1/chat/completions")
		return
	}
	body, err := io.ReadAll(r.Body)
	var in wire
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
		return
	}
	req := Request{Model: in.Model, Messages: in.Messages, Temperature: in.Temperature,
		MaxTokens: in.MaxTokens, Header: r.Header.Clone(), Body: body, At: time.Now()}
	if req.MaxTokens == 0 {
		req.MaxTokens = in.MaxCompletionTokens
	}

	sc, ok := s.record(req)
	defer s.leave()
	if !ok {
		s.t.Errorf("llmtest: no script entry answers request %d (last user message %.80q)", len(s.Requests()), req.LastUser())
		writeError(w, http.StatusInternalServerError, "llmtest: no script entry answers this request")
		return
	}
	if !s.wait(r, sc) {
		return // the client went away or the test ended: nobody reads an answer
	}
	s.answer(w, req, sc)
}

// record logs req and picks the first matching entry with uses left.
func (s *Server) record(req Request) (Script, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	for i, sc := range s.scripts {
		if (sc.Match == nil || sc.Match(req)) && (sc.Times == 0 || s.used[i] < sc.Times) {
			s.used[i]++
			return sc, true
		}
	}
	return Script{}, false
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// wait holds the answer for sc.Delay, or forever for Hang; false when the
// client cancelled or the server is closing first.
func (s *Server) wait(r *http.Request, sc Script) bool {
	if !sc.Hang && sc.Delay <= 0 {
		return true
	}
	var timeout <-chan time.Time
	if !sc.Hang {
		tm := time.NewTimer(sc.Delay)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-timeout:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

func (s *Server) answer(w http.ResponseWriter, req Request, sc Script) {
	if sc.RetryAfter != "" {
		w.Header().Set("Retry-After", sc.RetryAfter)
	}
	switch {
	case sc.Status != 0:
		writeError(w, sc.Status, fmt.Sprintf("llmtest: scripted status %d", sc.Status))
	case sc.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, sc.Raw)
	default:
		writeJSON(w, http.StatusOK, completion(req, sc, len(s.Requests())))
	}
}
