package export

import (
	"time"

	"github.com/kernelgate/kernelgate/eval"
)

// The searches table: one row per search and state change (started, then
// done, failed or cancelled; a resumed search logs started again), with its
// configuration, seed and budget and, once it ends, its outcome. The last row
// of a search_id is where it stands; search_steps hold its steps.
const (
	SubjectSearch = "events.search"
	TableSearches = "searches"
)

// SearchEvent is what the search runner publishes on events.search.
type SearchEvent struct {
	EventID  string    `json:"event_id"` // <search_id>.<state>.<steps>: one row per state reached
	Time     time.Time `json:"ts"`
	SearchID string    `json:"search_id"`
	TaskID   string    `json:"task_id"`
	State    string    `json:"state"`
	Error    string    `json:"error,omitempty"`
	Policy   string    `json:"policy"`
	Model    string    `json:"model"`
	Seed     int64     `json:"seed"`
	// The budget and the search's constants (rollout.Config).
	StepsBudget    int          `json:"steps_budget"`
	TokenBudget    int          `json:"token_budget"`
	C              float64      `json:"c"`
	ExpandRatio    float64      `json:"expand_ratio"`
	Alpha          float64      `json:"alpha"`
	PLarge         float64      `json:"p_large"`
	SmallStepLimit int          `json:"small_step_limit"`
	Pool           int          `json:"pool"`
	ContextRounds  int          `json:"context_rounds"`
	SkillK         int          `json:"skill_k"`
	SkillOmitRate  float64      `json:"skill_omit_rate"`
	Options        eval.Options `json:"options"`
	// Where it stands.
	Steps       int       `json:"steps"`
	TokensIn    int       `json:"tokens_in"`
	TokensOut   int       `json:"tokens_out"`
	BestNode    *int      `json:"best_node,omitempty"`
	BestEvalID  string    `json:"best_eval_id,omitempty"`
	BestSpeedup *float64  `json:"best_speedup,omitempty"`
	BestReward  *float64  `json:"best_reward,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

func (e *SearchEvent) header() (*string, *time.Time, string, string) {
	return &e.EventID, &e.Time, e.SearchID, "search_id"
}

// Search is one row of the searches table.
type Search struct {
	EventID        string      `parquet:"event_id"`
	TS             time.Time   `parquet:"ts,timestamp(millisecond)"`
	SearchID       string      `parquet:"search_id"`
	TaskID         string      `parquet:"task_id"`
	State          string      `parquet:"state"`
	Error          *string     `parquet:"error,optional"`
	Policy         string      `parquet:"policy"`
	Model          string      `parquet:"model"`
	Seed           int64       `parquet:"seed"`
	StepsBudget    int64       `parquet:"steps_budget"`
	TokenBudget    *int64      `parquet:"token_budget,optional"` // null: none
	C              float64     `parquet:"c"`
	ExpandRatio    float64     `parquet:"expand_ratio"`
	Alpha          float64     `parquet:"alpha"`
	PLarge         float64     `parquet:"p_large"`
	SmallStepLimit int64       `parquet:"small_step_limit"`
	Pool           int64       `parquet:"pool"`
	ContextRounds  int64       `parquet:"context_rounds"`
	SkillK         int64       `parquet:"skill_k"`
	SkillOmitRate  float64     `parquet:"skill_omit_rate"`
	Options        *OptionsRow `parquet:"options,optional"`
	Steps          int64       `parquet:"steps"`
	TokensIn       int64       `parquet:"tokens_in"`
	TokensOut      int64       `parquet:"tokens_out"`
	BestNode       *int64      `parquet:"best_node,optional"`
	BestEvalID     *string     `parquet:"best_eval_id,optional"`
	BestSpeedup    *float64    `parquet:"best_speedup,optional"`
	BestReward     *float64    `parquet:"best_reward,optional"`
	CreatedAt      time.Time   `parquet:"created_at,timestamp(millisecond)"`
}

// SearchRow flattens ev into a searches row; what is not known is null.
func SearchRow(ev SearchEvent) Search {
	r := Search{
		EventID: ev.EventID, TS: rowTime(ev.Time), SearchID: ev.SearchID, TaskID: ev.TaskID, State: ev.State,
		Policy: ev.Policy, Model: ev.Model, Seed: ev.Seed, StepsBudget: int64(ev.StepsBudget),
		C: ev.C, ExpandRatio: ev.ExpandRatio, Alpha: ev.Alpha, PLarge: ev.PLarge,
		SmallStepLimit: int64(ev.SmallStepLimit), Pool: int64(ev.Pool), ContextRounds: int64(ev.ContextRounds),
		SkillK: int64(ev.SkillK), SkillOmitRate: ev.SkillOmitRate, Options: optionsRow(&ev.Options),
		Steps: int64(ev.Steps), TokensIn: int64(ev.TokensIn), TokensOut: int64(ev.TokensOut),
		BestSpeedup: ev.BestSpeedup, BestReward: ev.BestReward, CreatedAt: rowTime(ev.CreatedAt),
	}
	if ev.Error != "" {
		r.Error = ptr(ev.Error)
	}
	if ev.TokenBudget > 0 {
		r.TokenBudget = ptr(int64(ev.TokenBudget))
	}
	if ev.BestNode != nil {
		r.BestNode = ptr(int64(*ev.BestNode))
	}
	if ev.BestEvalID != "" {
		r.BestEvalID = ptr(ev.BestEvalID)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = r.TS
	}
	return r
}
