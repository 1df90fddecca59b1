package overview

import (
	"bytes"
	"encoding/json"
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
	s, err := FromMetrics(strings.NewReader(""), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waits := []float64{0.0015, 0.0015, 0.00199}
	body, _ := json.Marshal(Slowest{Runs: 3, Tasks: []SlowTask{}, Exec: MeasuredOf([]float64{0.7, 0.715, 0.7}), QueueWait: MeasuredOf(waits)})
	if err := s.AddSlowest(body); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s, Snapshot{}, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "queue wait p50/p99/max  1.5 ms / 1.99 ms / 1.99 ms (3 runs)") ||
		!strings.Contains(buf.String(), "run p50/p99/max  700 ms / 715 ms / 715 ms (3 runs)") {
		t.Errorf("the frame:\n%s", buf.String())
	}
}

// The page and top say when the gateway is degraded or not ready, and why.
func TestHealthIsShown(t *testing.T) {
	for _, tt := range []struct {
		body, refusal, want string
	}{
		{`{"status":"ready"}`, "", "ready"},
		{`{"status":"degraded","detail":"checking batches left running: 3 checked, 2 to go"}`, "", "degraded: checking batches left running: 3 checked, 2 to go"},
		{"", "not ready: no worker", "not ready: no worker"},
	} {
		s, _ := FromMetrics(strings.NewReader(""), time.Now())
		s.AddReadyz([]byte(tt.body), tt.refusal)
		var buf bytes.Buffer
		if err := WriteText(&buf, s, Snapshot{}, "test"); err != nil {
			t.Fatal(err)
		}
		if s.Health != tt.want || !strings.Contains(buf.String(), tt.want) {
			t.Errorf("health %q, want %q; frame:\n%s", s.Health, tt.want, buf.String())
		}
	}
}
