package ui

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/kernelgate/kernelgate/redteam"
)

// redteamRun is GET /v1/redteam/{id} (schema RedteamRun), the fields shown.
type redteamRun struct {
	RedteamID string          `json:"redteam_id"`
	Status    string          `json:"status"`
	Done      int             `json:"done"`
	Total     int             `json:"total"`
	Batches   []string        `json:"batches"`
	CreatedAt time.Time       `json:"created_at"`
	Report    *redteam.Report `json:"report"`
	Error     *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// redteamView is the red-team page: the run, and its report cut into the
// rows the tables draw.
type redteamView struct {
	redteamRun
	Links      []batchLink    // each batch, with its task once the report names it
	Classes    []redteamClass // the report's, in its order
	Misses     []redteamMiss  // variants judged as passing, known gaps included
	Errors     []redteamMiss  // evaluations that could not run
	ControlsOK int            // controls judged correct
}

type batchLink struct{ ID, Task string }

// redteamClass is a class's row: its figures, a mark per task of the
// report (in its task order, as the CLI's table), and how it was caught.
type redteamClass struct {
	redteam.ClassReport
	Marks    []redteamMark
	Statuses []string // "reward_hack ×2", sorted
	FlagsBy  []string // "cache ×2", sorted
}

type redteamMark struct {
	Mark, Task, Title string
}

type redteamMiss struct {
	Task, Class, Status, Why, Gap string
	Flags                         []string
}

func (h *Handler) redteam(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Red-team run"}
	var run redteamRun
	if e := h.get(r, "/v1/redteam/"+url.PathEscape(r.PathValue("id")), &run); e != nil {
		h.fail(w, r, "redteam", p, e)
		return
	}
	p.Title, p.Data = "Red-team run "+run.RedteamID, newRedteamView(run)
	h.render(w, r, http.StatusOK, "redteam", p)
}

func newRedteamView(run redteamRun) redteamView {
	v := redteamView{redteamRun: run}
	rep := run.Report
	for i, id := range run.Batches {
		l := batchLink{ID: id}
		// The report's tasks and the batches are both in the request's
		// order, one batch per task.
		if rep != nil && len(rep.Tasks) == len(run.Batches) {
			l.Task = rep.Tasks[i]
		}
		v.Links = append(v.Links, l)
	}
	if rep == nil {
		return v
	}
	for _, c := range rep.Classes {
		row := redteamClass{ClassReport: c, Statuses: counted(c.Statuses), FlagsBy: counted(c.Flags)}
		for _, t := range rep.Tasks {
			m := redteamMark{Mark: " ", Task: t, Title: t + ": not generated"}
			for _, o := range c.Tasks {
				if o.Task == t {
					m = redteamMark{Mark: string(redteam.Mark(c, o)), Task: t, Title: t + ": " + outcomeText(o)}
				}
			}
			row.Marks = append(row.Marks, m)
		}
		v.Classes = append(v.Classes, row)
		for _, o := range c.Tasks {
			m := redteamMiss{Task: o.Task, Class: c.Name, Status: string(o.Status), Why: o.Miss, Flags: o.Flags}
			switch {
			case o.Skipped != "":
			case o.Error != "":
				m.Why = o.Error
				v.Errors = append(v.Errors, m)
			case !o.Caught:
				m.Gap = c.Gap
				v.Misses = append(v.Misses, m)
			}
		}
	}
	for _, o := range rep.Controls {
		if o.Caught {
			v.ControlsOK++
		}
	}
	return v
}

// outcomeText is an outcome in a few words, for a mark's tooltip.
func outcomeText(o redteam.Outcome) string {
	switch {
	case o.Skipped != "":
		return "skipped (" + o.Skipped + ")"
	case o.Error != "":
		return "error: " + shorten(o.Error, 200)
	case o.Caught:
		return "caught as " + string(o.Status)
	}
	return "missed: " + o.Miss
}

// counted is a count map as "key ×n", sorted by key.
func counted(m map[string]int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return out
}
