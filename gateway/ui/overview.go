package ui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/kernelgate/kernelgate/gateway/history"
	"github.com/kernelgate/kernelgate/gateway/ui/overview"
	"github.com/kernelgate/kernelgate/rollout/runner"
)

// overviewData is the overview page and what its script polls
// (/ui/overview.json): the snapshot, the gateway's history over the
// window, the latest batches and the latest searches. A part the key may
// not read (batches need reward, searches search) is left out and said so
// in Missing; the snapshot needs admin.
type overviewData struct {
	overview.Snapshot
	// HistoryJSON is GET /v1/stats/history's body, passed on as it is (a
	// day's is half a megabyte: decoding and encoding it again would cost
	// the poll more than the history does); History is it decoded, for the
	// page only.
	HistoryJSON json.RawMessage `json:"history"`
	History     *history.View   `json:"-"`
	Batches     []batchSummary  `json:"batches"`
	Searches    []runner.Status `json:"searches"`
}

type (
	batchSummary = overview.BatchSummary
	batchList    = overview.BatchList
)

// overviewBatches and overviewSearches are how many the overview lists.
const (
	overviewBatches  = 10
	overviewSearches = 10
)

// window is the request's history window: 1h unless it names another.
func window(r *http.Request) string {
	if w := r.URL.Query().Get("window"); slices.Contains(history.WindowNames, w) {
		return w
	}
	return history.WindowNames[0]
}

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

// overviewOf is the snapshot and the rest of the overview.
func (h *Handler) overviewOf(r *http.Request) (overviewData, *apiError) {
	s, e := h.snapshot(r)
	if e != nil {
		return overviewData{}, e
	}
	d := overviewData{Snapshot: s, HistoryJSON: json.RawMessage("null"), Batches: []batchSummary{}, Searches: []runner.Status{}}
	var raw []byte
	if e := h.get(r, "/v1/stats/history?window="+url.QueryEscape(window(r)), &raw); e != nil {
		d.Missing = append(d.Missing, "history: "+e.Message)
	} else {
		d.HistoryJSON = raw
	}
	var bl batchList
	if e := h.get(r, "/v1/batches?limit="+strconv.Itoa(overviewBatches), &bl); e != nil {
		d.Missing = append(d.Missing, "batches: "+e.Message)
	} else {
		d.Batches = bl.Batches
	}
	var sl searchList
	if e := h.get(r, "/v1/searches?limit="+strconv.Itoa(overviewSearches), &sl); e != nil {
		d.Missing = append(d.Missing, "searches: "+e.Message)
	} else {
		d.Searches = sl.Searches
	}
	return d, nil
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Overview", Nav: "overview"}
	d, e := h.overviewOf(r)
	if e != nil {
		h.fail(w, r, "overview", p, e)
		return
	}
	var v history.View
	if err := json.Unmarshal(d.HistoryJSON, &v); err == nil && v.Window != "" {
		d.History = &v
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "overview", p)
}

// overviewJSON is what the overview's script polls.
func (h *Handler) overviewJSON(w http.ResponseWriter, r *http.Request) {
	d, e := h.overviewOf(r)
	if e != nil {
		writeJSONError(w, e.Status, e.Code, e.Message)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(d)
}
