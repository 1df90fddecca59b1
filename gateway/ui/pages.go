package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/rollout/runner"
	"github.com/kernelgate/kernelgate/rollout/skills"
)

// batchView is GET /v1/batches/{id} (schema Batch), the fields shown.
type batchView struct {
	BatchID    string          `json:"batch_id"`
	Status     string          `json:"status"`
	Done       int             `json:"done"`
	Total      int             `json:"total"`
	CreatedAt  time.Time       `json:"created_at"`
	TaskName   string          `json:"task_name"`
	RewardFn   string          `json:"reward_fn"`
	Rewards    []*float64      `json:"rewards"`
	Results    []*eval.Verdict `json:"results"`
	Cached     []*bool         `json:"cached"`
	Valid      []*bool         `json:"valid"`
	Notes      []*string       `json:"notes"`
	MakespanMS *float64        `json:"makespan_ms"`
}

// item is one row of a batch.
type item struct {
	Index   int
	Reward  *float64
	Verdict *eval.Verdict
	Cached  bool
	Note    string
}

func (b batchView) Items() []item {
	out := make([]item, b.Total)
	for i := range out {
		out[i].Index = i
		if i < len(b.Rewards) {
			out[i].Reward = b.Rewards[i]
		}
		if i < len(b.Results) {
			out[i].Verdict = b.Results[i]
		}
		if i < len(b.Cached) && b.Cached[i] != nil {
			out[i].Cached = *b.Cached[i]
		}
		if i < len(b.Notes) && b.Notes[i] != nil {
			out[i].Note = *b.Notes[i]
		}
	}
	return out
}

// batchesView is the batches page: a page of GET /v1/batches.
type batchesView struct {
	Batches      []batchSummary
	Status, Task string
	Statuses     []string
	Next         string // the next page's URL; "" on the last
}

func (h *Handler) batches(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if id := strings.TrimSpace(q.Get("id")); id != "" {
		http.Redirect(w, r, "/ui/batches/"+url.PathEscape(id), http.StatusSeeOther)
		return
	}
	p := page{Title: "Batches", Nav: "batches"}
	v := batchesView{Status: q.Get("status"), Task: strings.TrimSpace(q.Get("task")), Statuses: []string{"running", "done", "lost"}}
	api := url.Values{"limit": {"50"}}
	for k, val := range map[string]string{"status": v.Status, "task": v.Task, "before": q.Get("before")} {
		if val != "" {
			api.Set(k, val)
		}
	}
	var l batchList
	if e := h.get(r, "/v1/batches?"+api.Encode(), &l); e != nil {
		h.fail(w, r, "batches", p, e)
		return
	}
	v.Batches = l.Batches
	if l.NextBefore != "" {
		api.Set("before", l.NextBefore)
		api.Del("limit")
		v.Next = "/ui/batches?" + api.Encode()
	}
	p.Data = v
	h.render(w, r, http.StatusOK, "batches", p)
}

func (h *Handler) batch(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Batch", Nav: "batches"}
	var b batchView
	if e := h.get(r, "/v1/batches/"+url.PathEscape(r.PathValue("id")), &b); e != nil {
		h.fail(w, r, "batch", p, e)
		return
	}
	p.Title, p.Data = "Batch "+b.BatchID, b
	h.render(w, r, http.StatusOK, "batch", p)
}

type searchList struct {
	Searches   []runner.Status `json:"searches"`
	NextCursor string          `json:"next_cursor"`
}

func (h *Handler) searches(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Searches", Nav: "searches"}
	var l searchList
	if e := h.get(r, "/v1/searches?limit=100", &l); e != nil {
		h.fail(w, r, "searches", p, e)
		return
	}
	p.Data = l
	h.render(w, r, http.StatusOK, "searches", p)
}

func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Search", Nav: "searches"}
	var st runner.Status
	if e := h.get(r, "/v1/searches/"+url.PathEscape(r.PathValue("id")), &st); e != nil {
		h.fail(w, r, "search", p, e)
		return
	}
	p.Title, p.Data = "Search "+st.SearchID, st
	h.render(w, r, http.StatusOK, "search", p)
}

// skillsView is the skills page: the rules the filter keeps.
type skillsView struct {
	Rules         []skills.Rule
	Query, Status string
	Total         int
}

func (h *Handler) skills(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Skills", Nav: "skills"}
	var l struct {
		Skills []skills.Rule `json:"skills"`
	}
	if e := h.get(r, "/v1/skills", &l); e != nil {
		h.fail(w, r, "skills", p, e)
		return
	}
	v := skillsView{Query: strings.TrimSpace(r.URL.Query().Get("q")), Status: r.URL.Query().Get("status"), Total: len(l.Skills)}
	for _, k := range l.Skills {
		if keepRule(k, v.Query, v.Status) {
			v.Rules = append(v.Rules, k)
		}
	}
	p.Data = v
	h.render(w, r, http.StatusOK, "skills", p)
}

// keepRule: status matches (or is empty) and q is in the rule's text,
// signature or source search, case-insensitively.
func keepRule(k skills.Rule, q, status string) bool {
	if status != "" && k.Status != status {
		return false
	}
	q = strings.ToLower(q)
	return q == "" || slices.ContainsFunc([]string{k.Rule, k.Signature, k.SourceSearchID, k.ID},
		func(s string) bool { return strings.Contains(strings.ToLower(s), q) })
}

type taskRow struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Origin   string    `json:"origin"`
	TaskHash string    `json:"task_hash"`
	Created  time.Time `json:"created_at"`
	GPU      *gpuRun   `json:"gpu"` // schema TaskGPU: a suite task's figures; nil without
}

// gpuRun is what a GPU check measured for a task (the manifest's).
type gpuRun struct {
	Name            string   `json:"name"`
	RefMS           float64  `json:"ref_ms"`
	SolutionSpeedup *float64 `json:"solution_speedup"`
	SolutionMS      *float64 `json:"solution_ms"`
	MeasuredAt      string   `json:"measured_at"`
}

// suite is the tasks of one suite (the id's folder: ci, level1, api, ...).
type suite struct {
	Name  string
	Tasks []taskRow
}

func (h *Handler) tasks(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Tasks", Nav: "tasks"}
	var l struct {
		Tasks []taskRow `json:"tasks"`
		Next  string    `json:"next"`
	}
	var all []taskRow
	for path := "/v1/tasks?limit=1000"; ; {
		if e := h.get(r, path, &l); e != nil {
			h.fail(w, r, "tasks", p, e)
			return
		}
		all = append(all, l.Tasks...)
		if l.Next == "" || len(all) >= 20000 { // a bound: a page per thousand tasks
			break
		}
		path = "/v1/tasks?limit=1000&after=" + url.QueryEscape(l.Next)
		l.Tasks, l.Next = nil, ""
	}
	var suites []suite
	for _, t := range all {
		name := t.Origin
		if i := strings.LastIndex(t.ID, "/"); i > 0 {
			name = t.ID[:i]
		}
		if len(suites) == 0 || suites[len(suites)-1].Name != name {
			suites = append(suites, suite{Name: name})
		}
		suites[len(suites)-1].Tasks = append(suites[len(suites)-1].Tasks, t)
	}
	p.Data = suites
	h.render(w, r, http.StatusOK, "tasks", p)
}
