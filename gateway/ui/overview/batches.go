package overview

import "time"

// BatchSummary and BatchList are the body of GET /v1/batches (schemas
// BatchSummary, BatchList): the gateway serves them and the dashboard
// decodes them, one type for both so that they cannot drift apart.
type BatchSummary struct {
	BatchID    string    `json:"batch_id"`
	Status     string    `json:"status"`
	Done       int       `json:"done"`
	Total      int       `json:"total"`
	CreatedAt  time.Time `json:"created_at"`
	TaskName   string    `json:"task_name"`
	TaskHash   string    `json:"task_hash"`
	RewardFn   string    `json:"reward_fn"`
	Correct    int       `json:"correct"`
	MeanReward *float64  `json:"mean_reward"` // over the items in; null before any
	Location   string    `json:"location"`
}

type BatchList struct {
	Batches    []BatchSummary `json:"batches"`
	NextBefore string         `json:"next_before,omitempty"` // more follow: pass as ?before=
}
