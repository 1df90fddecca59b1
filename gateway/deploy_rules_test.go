package gateway

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// KernelgateSinkFallingBehind, evaluated by Prometheus's own engine on
// made-up backlogs (one sample a minute for 20 minutes): a sink that
// empties now and then, holds a steady small backlog or drains a large one
// is fine; one that never empties and grows, or sits on a large backlog, is
// not. (The rule's `for:` comes on top: Prometheus waits that long first.)
func TestSinkFallingBehindAlert(t *testing.T) {
	expr := alertExpr(t, "KernelgateSinkFallingBehind")
	ramp := func(from, step float64) []float64 {
		out := make([]float64, 21)
		for i := range out {
			out[i] = from + step*float64(i)
		}
		return out
	}
	for name, c := range map[string]struct {
		backlog []float64
		fires   bool
	}{
		"drains between bursts":  {[]float64{0, 300, 0, 200, 0, 500, 0, 100, 0, 300, 0, 0, 200, 0, 400, 0, 0, 0, 100, 0, 50}, false},
		"a steady small backlog": {ramp(1000, 0), false},
		"draining a large one":   {ramp(90000, -4000), false},
		"never empty, growing":   {ramp(100, 100), true},
		"large and flat":         {ramp(60000, 0), true},
	} {
		t.Run(name, func(t *testing.T) {
			eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 10000, Timeout: 10 * time.Second, LookbackDelta: 5 * time.Minute})
			q, err := eng.NewInstantQuery(t.Context(), oneSeries(c.backlog), nil, expr, time.UnixMilli(0).Add(20*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			res := q.Exec(t.Context())
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			v, err := res.Vector()
			if err != nil {
				t.Fatal(err)
			}
			if fires := len(v) > 0; fires != c.fires {
				t.Errorf("fires %v (%v), want %v", fires, v, c.fires)
			}
		})
	}
}

func alertExpr(t *testing.T, name string) string {
	t.Helper()
	groups, errs := rulefmt.ParseFile(filepath.Join("..", "deploy", "prometheus", "kernelgate-rules.yml"), false,
		model.UTF8Validation, parser.NewParser(parser.Options{}), kgtest.Logger(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == name {
				return r.Expr
			}
		}
	}
	t.Fatalf("no alert %s", name)
	return ""
}

// oneSeries is a storage holding kernelgate_sink_backlog_events{instance="gw"}
// with one value a minute from time 0 (the engine's own test storage would
// pull Prometheus's service discovery into go.mod).
func oneSeries(values []float64) storage.Queryable {
	lset := labels.FromStrings("__name__", "kernelgate_sink_backlog_events", "instance", "gw")
	samples := make([]chunks.Sample, len(values))
	for i, v := range values {
		samples[i] = fSample{t: int64(i) * 60_000, f: v}
	}
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(_ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
			for _, m := range ms {
				if !m.Matches(lset.Get(m.Name)) {
					return &seriesSet{}
				}
			}
			return &seriesSet{series: []storage.Series{storage.NewListSeries(lset, samples)}}
		},
	}}
}

type fSample struct {
	t int64
	f float64
}

func (s fSample) T() int64                      { return s.t }
func (s fSample) ST() int64                     { return 0 }
func (s fSample) F() float64                    { return s.f }
func (s fSample) H() *histogram.Histogram       { return nil }
func (s fSample) FH() *histogram.FloatHistogram { return nil }
func (s fSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s fSample) Copy() chunks.Sample           { return s }

type seriesSet struct {
	series []storage.Series
	i      int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i <= len(s.series) }
func (s *seriesSet) At() storage.Series                { return s.series[s.i-1] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }
