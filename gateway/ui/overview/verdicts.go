package overview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// SlowTask is one task of GET /v1/stats/slowest-tasks: the tasks whose
// evaluations ran slowest lately, by median run time.
type SlowTask struct {
	TaskID      string    `json:"task_id,omitempty"` // absent: no registered task has this source
	TaskName    string    `json:"task_name"`
	TaskHash    string    `json:"task_hash"`
	Evaluations int       `json:"evaluations"`
	MedianExecS float64   `json:"median_exec_s"`
	MaxExecS    float64   `json:"max_exec_s"`
	LastAt      time.Time `json:"last_at"`
}

// Slowest is that endpoint's answer.
type Slowest struct {
	Runs  int        `json:"runs"`  // the runs ranked (at most the gateway keeps)
	Since *time.Time `json:"since"` // the oldest of them; null with none
	Tasks []SlowTask `json:"tasks"`
	// Exec and QueueWait are the same runs' run times and queue waits.
	Exec      Measured `json:"exec"`
	QueueWait Measured `json:"queue_wait"`
}

// SlowestPath is what AddSlowest reads: the ten slowest.
const SlowestPath = "/v1/stats/slowest-tasks?limit=10"

// verdictDetail reads what the status counts do not say: the hack flags
// caught, the answers given without a run, and the sink's backlog.
func (s *Snapshot) verdictDetail(fams map[string]*dto.MetricFamily) {
	for _, m := range metricsOf(fams, "kernelgate_evaluation_hack_flags_total") {
		s.HackFlags[label(m, "flag")] += m.GetCounter().GetValue()
	}
	for _, m := range metricsOf(fams, "kernelgate_evaluations_cached_total") {
		s.Cached[label(m, "from")] += m.GetCounter().GetValue()
	}
	if f := fams["kernelgate_sink_backlog_events"]; f != nil && len(f.Metric) > 0 {
		v := gaugeValue(f.Metric[0])
		s.SinkBacklog = &v
	}
}

// AddSlowest fills Slowest from GET SlowestPath's body.
func (s *Snapshot) AddSlowest(body []byte) error {
	var sl Slowest
	if err := json.Unmarshal(body, &sl); err != nil {
		return fmt.Errorf("overview: decoding /v1/stats/slowest-tasks: %w", err)
	}
	s.Slowest = &sl
	s.Exec, s.QueueWait = sl.Exec, sl.QueueWait
	return nil
}

// CacheHitRate is the share of verdicts the result cache answered, and
// SharedRate that of those an identical evaluation in flight answered
// (nil before any verdict).
func (s Snapshot) CacheHitRate() *float64 { return s.share(s.Cached["cache"]) }

// SharedRate: see CacheHitRate.
func (s Snapshot) SharedRate() *float64 { return s.share(s.Cached["shared"]) }

func (s Snapshot) share(n float64) *float64 {
	total := s.Total()
	if total == 0 {
		return nil
	}
	v := n / total
	return &v
}

// Flags are the hack flags caught at least once, most frequent first (ties
// by name).
func (s Snapshot) Flags() []string {
	var out []string
	for k, v := range s.HackFlags {
		if v > 0 {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.HackFlags[b], s.HackFlags[a]), strings.Compare(a, b))
	})
	return out
}

// writeVerdictDetail draws the cache, the flags, the sink and the slowest
// tasks (WriteText).
func writeVerdictDetail(w io.Writer, s Snapshot) {
	fmt.Fprintf(w, "cache hits\t%s\tshared\t%s\tsink backlog\t%s\n",
		percent(s.CacheHitRate()), percent(s.SharedRate()), optional(s.SinkBacklog, "%.0f"))
	var flags []string
	for _, f := range s.Flags() {
		flags = append(flags, fmt.Sprintf("%s %.0f", f, s.HackFlags[f]))
	}
	if len(flags) == 0 {
		flags = []string{"none caught"}
	}
	fmt.Fprintf(w, "hack flags\t%s\n\n", strings.Join(flags, "  "))
	if s.Slowest == nil || len(s.Slowest.Tasks) == 0 {
		return
	}
	fmt.Fprintf(w, "SLOWEST TASK\tRUNS\tMEDIAN\tMAX\t(last %d runs)\n", s.Slowest.Runs)
	for _, t := range s.Slowest.Tasks {
		fmt.Fprintf(w, "%s\t%d\t%.3gs\t%.3gs\n", t.Name(), t.Evaluations, t.MedianExecS, t.MaxExecS)
	}
	fmt.Fprintln(w)
}

// Name is the task's registry id, else its name and hash prefix.
func (t SlowTask) Name() string {
	if t.TaskID != "" {
		return t.TaskID
	}
	_, hex, _ := strings.Cut(t.TaskHash, ":")
	return fmt.Sprintf("%s (%.8s)", t.TaskName, hex)
}

func percent(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *v*100)
}

// AddReadyz records what /readyz answered: its body and, when it refused,
// the refusal's message.
func (s *Snapshot) AddReadyz(body []byte, refusal string) {
	if refusal != "" {
		s.Health = "not ready: " + strings.TrimPrefix(refusal, "not ready: ")
		return
	}
	var h struct {
		Status string `json:"status"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &h) != nil || h.Status == "" {
		return
	}
	s.Health = h.Status
	if h.Detail != "" {
		s.Health += ": " + h.Detail
	}
}
