package gateway

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/kernelgate/kernelgate/bus"
	"github.com/kernelgate/kernelgate/dispatch"
	"github.com/kernelgate/kernelgate/internal/kgtest"
)

// The Grafana dashboard and the alert rules in deploy/ are read by their
// own tools' parsers (Grafana's foundation SDK, Prometheus's rule and
// PromQL parsers), and every metric they query must be one this gateway
// exports: a renamed metric fails here, not on an operator's empty panel.
func TestDeployFilesQueryRealMetrics(t *testing.T) {
	known := exportedMetrics(t)
	p := parser.NewParser(parser.Options{})
	check := func(where, expr string) {
		// Grafana's interval variables are not PromQL; Grafana swaps them first.
		e, err := p.ParseExpr(strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m").Replace(expr))
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, expr, err)
			return
		}
		n := 0
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				n++
				if !known[familyOf(vs.Name, known)] {
					t.Errorf("%s: %s is not a metric the gateway exports", where, vs.Name)
				}
			}
			return nil
		})
		if n == 0 {
			t.Errorf("%s: %q queries no metric", where, expr)
		}
	}
	for where, expr := range dashboardExprs(t) {
		check(where, expr)
	}
	groups, errs := rulefmt.ParseFile(filepath.Join("..", "deploy", "prometheus", "kernelgate-rules.yml"), false,
		model.UTF8Validation, p, kgtest.Logger(t))
	for _, err := range errs {
		t.Errorf("alert rules: %v", err)
	}
	if groups == nil || len(groups.Groups) == 0 {
		t.Fatal("alert rules: no group")
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			check("rule "+r.Alert, r.Expr)
		}
	}
	for _, want := range []string{"KernelgateQueueGrowing", "KernelgateHarnessErrors", "KernelgateGPUIdleWithQueue", "KernelgateStoreFull", "KernelgateSinkFallingBehind"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s in %v", want, alerts)
		}
	}
}

// dashboardExprs decodes the dashboard strictly with Grafana's own types
// (an unknown field or a wrong type is an error) and returns each panel
// target's expr by "panel TITLE/REFID".
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "kernelgate.json"))
	if err != nil {
		t.Fatal(err)
	}
	plugins.RegisterDefaultPlugins()
	var d dashboard.Dashboard
	if err := sdkError(d.UnmarshalJSONStrict(raw)); err != nil {
		t.Fatalf("kernelgate.json is not a Grafana dashboard: %v", err)
	}
	if err := sdkError(d.Validate()); err != nil {
		t.Fatalf("kernelgate.json: %v", err)
	}
	// The SDK keeps targets as plugin types; the JSON is the simplest common view.
	var plain struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &plain); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range plain.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			out["panel "+p.Title+"/"+tg.RefID] = tg.Expr
		}
	}
	if len(out) < 10 {
		t.Fatalf("the dashboard has %d queries; it should cover the gateway's metrics", len(out))
	}
	return out
}

// sdkError undoes the SDK's typed nil: it returns an empty cog.BuildErrors
// as a non-nil error when nothing went wrong.
func sdkError(err error) error {
	if be, ok := err.(cog.BuildErrors); ok && len(be) == 0 {
		return nil
	}
	return err
}

// exportedMetrics scrapes a gateway with a bus, two GPUs and one observed
// result (so that the labelled families have a series) and returns the
// metric families it serves.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	srv := New(Config{}, Deps{Bus: startBus(t, bus.Options{}), GPUs: twoH200s(), Log: kgtest.Logger(t)})
	var r dispatch.Result
	if err := json.Unmarshal([]byte(`{"index":0,"id":"b-0","verdict":{"status":"correct","stage_ms":{"fork":3}},"queue_wait_ms":2,"exec_ms":9}`), &r); err != nil {
		t.Fatal(err)
	}
	srv.metrics.observe(r)
	request(t, srv.Handler(), "GET", "/healthz", "", nil) // an HTTP request to count
	rec := request(t, srv.Handler(), "GET", "/metrics", "", nil)
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	known := map[string]bool{}
	for name := range fams {
		known[name] = true
	}
	// Gauges served only when there is something to say (store damage, a
	// Parquet log to count) are known by their descriptors.
	descs := make(chan *prometheus.Desc, 64)
	(&stateCollector{s: srv}).Describe(descs)
	close(descs)
	for d := range descs {
		if m := descName.FindStringSubmatch(d.String()); m != nil {
			known[m[1]] = true
		}
	}
	for _, want := range []string{"kernelgate_queue_depth", "kernelgate_gpu_utilization_ratio", "kernelgate_http_requests_total",
		"kernelgate_evaluation_stage_seconds", "kernelgate_store_writable", "kernelgate_sink_backlog_events",
		"kernelgate_evaluation_hack_flags_total", "kernelgate_evaluations_cached_total"} {
		if !known[want] {
			t.Fatalf("the scrape has no %s; families: %v", want, slices.Sorted(maps.Keys(known)))
		}
	}
	return known
}

// descName reads a descriptor's name from its String form (client_golang
// has no accessor for it).
var descName = regexp.MustCompile(`fqName: "([a-zA-Z_:][a-zA-Z0-9_:]*)"`)

// familyOf maps a histogram's series (_bucket, _sum, _count) to its family.
func familyOf(name string, known map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && known[base] {
			return base
		}
	}
	return name
}
