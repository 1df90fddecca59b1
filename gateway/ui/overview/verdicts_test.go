package overview

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const detail = `# TYPE kernelgate_evaluations_total counter
kernelgate_evaluations_total{status="correct"} 30
kernelgate_evaluations_total{status="reward_hack"} 10
# TYPE kernelgate_evaluation_hack_flags_total counter
kernelgate_evaluation_hack_flags_total{flag="thread"} 6
kernelgate_evaluation_hack_flags_total{flag="decoy"} 6
kernelgate_evaluation_hack_flags_total{flag="other"} 1
kernelgate_evaluation_hack_flags_total{flag="forge"} 0
# TYPE kernelgate_evaluations_cached_total counter
kernelgate_evaluations_cached_total{from="cache"} 10
kernelgate_evaluations_cached_total{from="shared"} 2
# TYPE kernelgate_sink_backlog_events gauge
kernelgate_sink_backlog_events 42
`

func TestVerdictDetail(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, err := FromMetrics(strings.NewReader(detail), now)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.CacheHitRate(); r == nil || *r != 0.25 {
		t.Errorf("cache hit rate %v, want 10/40", r)
	}
	if r := s.SharedRate(); r == nil || *r != 0.05 {
		t.Errorf("shared rate %v, want 2/40", r)
	}
	if got := strings.Join(s.Flags(), ","); got != "decoy,thread,other" {
		t.Errorf("flags %s, want those caught, most first, ties by name", got)
	}
	if s.SinkBacklog == nil || *s.SinkBacklog != 42 {
		t.Errorf("sink backlog %v", s.SinkBacklog)
	}
	empty, _ := FromMetrics(strings.NewReader("# TYPE kernelgate_ready gauge\nkernelgate_ready 1\n"), now)
	if empty.CacheHitRate() != nil || empty.SinkBacklog != nil || len(empty.Flags()) != 0 {
		t.Errorf("a gateway without verdicts or sink: %+v", empty)
	}
	if err := s.AddSlowest([]byte(`{"runs":12,"since":"2026-12-01T11:00:00Z","tasks":[
		{"task_id":"level1/3_matmul","task_name":"3_matmul","task_hash":"sha256:aa","evaluations":4,"median_exec_s":12.5,"max_exec_s":30,"last_at":"2026-12-01T11:59:00Z"},
		{"task_name":"inline","task_hash":"sha256:0123456789abcdef","evaluations":1,"median_exec_s":2,"max_exec_s":2,"last_at":"2026-12-01T11:58:00Z"}]}`)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s, Snapshot{}, "test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cache hits", "25.0%", "5.0%", "42", "decoy 6  thread 6  other 1", "level1/3_matmul", "12.5s", "inline (01234567)", "last 12 runs"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the frame has no %q:\n%s", want, buf.String())
		}
	}
	if err := s.AddSlowest([]byte(`[]`)); err == nil {
		t.Error("a list decoded as the ranking")
	}
}
