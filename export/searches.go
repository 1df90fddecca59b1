package export

import (
	"time"

	"github.com/kernelgate/kernelgate/event"
)

// The searches table: one row per search and state change (started, then
// done, failed or cancelled; a resumed search logs started again), with its
// configuration, seed and budget and, once it ends, its outcome. The last row
// of a search_id is where it stands; search_steps hold its steps.
const TableSearches = "searches"

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
func SearchRow(ev event.Search) Search {
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
