package overview

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSecondsAreWrittenForAPerson(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		v    *float64
		want string
	}{
		{nil, "–"},
		{f(0.0004), "0.4 ms"},
		{f(0.00213), "2.13 ms"},
		{f(0.75), "750 ms"},
		{f(0.9996), "1 s"},
		{f(2.5), "2.5 s"},
		{f(312.4), "312 s"},
	} {
		if got := Seconds(tt.v); got != tt.want {
			t.Errorf("Seconds(%v) = %q, want %q", deref(tt.v), got, tt.want)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// top's frame gives a queue wait of milliseconds in ms, not as "0.00213s".
func TestTheFrameGivesAShortQueueWaitInMilliseconds(t *testing.T) {
	scrape := `# TYPE kernelgate_evaluation_queue_wait_seconds histogram
kernelgate_evaluation_queue_wait_seconds_bucket{le="0.001"} 0
kernelgate_evaluation_queue_wait_seconds_bucket{le="0.002"} 10
kernelgate_evaluation_queue_wait_seconds_bucket{le="0.005"} 10
kernelgate_evaluation_queue_wait_seconds_bucket{le="+Inf"} 10
kernelgate_evaluation_queue_wait_seconds_sum 0.015
kernelgate_evaluation_queue_wait_seconds_count 10
`
	s, err := FromMetrics(strings.NewReader(scrape), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s, Snapshot{}, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "queue wait p50/p99  1.5 ms / 1.99 ms") {
		t.Errorf("the frame:\n%s", buf.String())
	}
}
