package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/kernelgate/kernelgate/gateway/ui/overview"
)

// snapshot reads /metrics, /v1/gpus and the slowest tasks as the caller.
func (h *Handler) snapshot(r *http.Request) (overview.Snapshot, *apiError) {
	var text, gpus []byte
	if e := h.get(r, "/metrics", &text); e != nil {
		return overview.Snapshot{}, e
	}
	s, err := overview.FromMetrics(bytes.NewReader(text), time.Now())
	if err != nil {
		return s, &apiError{Status: http.StatusBadGateway, Code: "undecodable", Message: err.Error(), Path: "/metrics"}
	}
	if e := h.get(r, "/v1/gpus", &gpus); e != nil {
		s.Missing = append(s.Missing, "GPUs: "+e.Message)
	} else if err := s.AddGPUs(gpus); err != nil {
		s.Missing = append(s.Missing, err.Error())
	}
	var ready []byte
	if e := h.get(r, "/readyz", &ready); e != nil {
		s.AddReadyz(nil, e.Message)
	} else {
		s.AddReadyz(ready, "")
	}
	var slow []byte
	if e := h.get(r, overview.SlowestPath, &slow); e != nil {
		s.Missing = append(s.Missing, "slowest tasks: "+e.Message)
	} else if err := s.AddSlowest(slow); err != nil {
		s.Missing = append(s.Missing, err.Error())
	}
	return s, nil
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Overview", Nav: "overview"}
	s, e := h.snapshot(r)
	if e != nil {
		h.fail(w, r, "overview", p, e)
		return
	}
	p.Data = s
	h.render(w, r, http.StatusOK, "overview", p)
}

// overviewJSON is what the overview's script polls.
func (h *Handler) overviewJSON(w http.ResponseWriter, r *http.Request) {
	s, e := h.snapshot(r)
	if e != nil {
		writeJSONError(w, e.Status, e.Code, e.Message)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(s)
}
