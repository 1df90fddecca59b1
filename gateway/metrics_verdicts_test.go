package gateway

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/event"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// scrape reads a gateway's /metrics into families.
func scrape(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := request(t, srv.Handler(), "GET", "/metrics", "", nil)
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// series is each series of a family by its one label's value ("" without labels).
func series(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		key := ""
		if len(m.Label) > 0 {
			key = m.Label[0].GetValue()
		}
		out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return out
}

func result(t *testing.T, js string) dispatch.Result {
	t.Helper()
	var r dispatch.Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Hack flags are counted once per verdict, only under the flags eval knows
// (a made-up one from the sandbox is "other"); cached and shared answers
// have their own counter, and kernelgate_evaluations_total keeps its one
// label.
func TestVerdictMetrics(t *testing.T) {
	srv := New(Config{}, Deps{Log: kgtest.Logger(t)})
	for _, js := range []string{
		`{"verdict":{"status":"reward_hack","hack_flags":["thread","thread","made_up","decoy"],"task_hash":"sha256:a"},"exec_ms":5}`,
		`{"verdict":{"status":"reward_hack","hack_flags":["thread"],"task_hash":"sha256:a"},"cached":true}`,
		`{"verdict":{"status":"correct","hack_flags":[],"task_hash":"sha256:a"},"shared":true}`,
		`{"verdict":{"status":"correct","hack_flags":[],"task_hash":"sha256:b"},"exec_ms":7}`,
		`{"verdict":{"status":"correct","hack_flags":["x\"} 1e9\nkernelgate_ready 0"],"task_hash":"sha256:b"},"exec_ms":7}`,
	} {
		srv.metrics.observe(result(t, js))
	}
	fams := scrape(t, srv)
	flags := series(fams, "kernelgate_evaluation_hack_flags_total")
	if len(flags) != len(eval.HackFlags)+1 {
		t.Errorf("%d flag series, want one per eval.HackFlags and other: %v", len(flags), flags)
	}
	for flag, want := range map[string]float64{"thread": 2, "decoy": 1, "other": 2, "forge": 0} {
		if flags[flag] != want {
			t.Errorf("flag %s: %g, want %g", flag, flags[flag], want)
		}
	}
	if _, ok := flags["made_up"]; ok {
		t.Error("an unknown flag made a label")
	}
	cached := series(fams, "kernelgate_evaluations_cached_total")
	if cached["cache"] != 1 || cached["shared"] != 1 || len(cached) != 2 {
		t.Errorf("cached %v, want cache 1 and shared 1", cached)
	}
	if f := fams["kernelgate_evaluations_total"]; f == nil || len(f.Metric[0].Label) != 1 {
		t.Errorf("kernelgate_evaluations_total lost its one label (status): %v", f)
	}
	if total := series(fams, "kernelgate_evaluations_total"); total["reward_hack"] != 2 || total["correct"] != 3 {
		t.Errorf("evaluations %v", total)
	}
	if f := fams["kernelgate_ready"]; f == nil || len(f.Metric) != 1 {
		t.Errorf("a flag's text reached the exposition: kernelgate_ready %v", f)
	}
	if _, ok := fams["kernelgate_sink_backlog_events"]; ok {
		t.Error("a sink backlog without a bus")
	}
}

// The backlog is the EVENTS the sink's consumer has not acked; when the
// stream cannot be read the series is absent, not 0.
func TestSinkBacklogMetric(t *testing.T) {
	b := startBus(t, bus.Options{})
	srv := New(Config{}, Deps{Bus: b, Log: kgtest.Logger(t)})
	backlog := func() (float64, bool) {
		v, ok := series(scrape(t, srv), "kernelgate_sink_backlog_events")[""]
		return v, ok
	}
	if v, ok := backlog(); !ok || v != 0 {
		t.Fatalf("backlog %g (present %v), want 0 on an empty stream", v, ok)
	}
	for i := range 3 {
		if err := b.PublishEvent(t.Context(), event.SubjectEvaluation, fmt.Sprintf("ev-%d", i), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	// The consumer's pending count follows the stream a moment later.
	kgtest.CheckFor(t, 5*time.Second, 20*time.Millisecond, func() error {
		if v, ok := backlog(); !ok || v != 3 {
			return fmt.Errorf("backlog %g (present %v), want 3 unwritten events", v, ok)
		}
		return nil
	})
	b.Close()
	if v, ok := backlog(); ok {
		t.Errorf("backlog %g from a closed bus, want no series", v)
	}
}
