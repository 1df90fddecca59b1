package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kernelgate/kernelgate/eval"
	"github.com/kernelgate/kernelgate/gateway/apikey"
	"github.com/kernelgate/kernelgate/internal/kgtest"
	"github.com/kernelgate/kernelgate/tasks"
)

func TestSlowestRanksByMedian(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := newSlowest(4, func() time.Time { now = now.Add(time.Second); return now })
	s.add("sha256:old", "old", 99000, 0) // pushed out of the ring below
	s.add("sha256:a", "a", 1000, 0)
	s.add("sha256:a", "a", 9000, 0) // one slow run: a's median is 5 s
	s.add("sha256:b", strings.Repeat("é", 200), 6000, 0)
	s.add("sha256:a", "a-renamed", 5000, 0)
	s.add("", "no hash", 1e6, 0) // not a task: ignored
	got := s.top(10)
	if got.Runs != 4 || got.Since == nil || !got.Since.Equal(time.Date(2026, 12, 1, 12, 0, 2, 0, time.UTC)) {
		t.Errorf("runs %d since %v, want the 4 latest from 12:00:02", got.Runs, got.Since)
	}
	if len(got.Tasks) != 2 || got.Tasks[0].TaskHash != "sha256:b" || got.Tasks[1].TaskHash != "sha256:a" {
		t.Fatalf("ranking %+v, want b (median 6 s) before a (median 5 s), old gone", got.Tasks)
	}
	a := got.Tasks[1]
	if a.Evaluations != 3 || a.MedianExecS != 5 || a.MaxExecS != 9 || a.TaskName != "a-renamed" {
		t.Errorf("a: %+v", a)
	}
	if n := len([]rune(got.Tasks[0].TaskName)); n != maxTaskNameLen {
		t.Errorf("a name of %d runes kept, want it cut to %d", n, maxTaskNameLen)
	}
	// The run times over the same 4 runs: observed values, the maximum 9 s.
	if e := got.Exec; e.Count != 4 || *e.P50 != 5 || *e.P99 != 9 || *e.Max != 9 || got.QueueWait.Count != 4 {
		t.Errorf("exec %+v, queue wait %+v", e, got.QueueWait)
	}
	if one := s.top(1); len(one.Tasks) != 1 || one.Tasks[0].TaskHash != "sha256:b" {
		t.Errorf("top 1: %+v", one.Tasks)
	}
}

// Only runs rank: cached and shared answers ran nothing, and a task check
// times the reference, not a candidate.
func TestSlowestCountsRunsOnly(t *testing.T) {
	srv := New(Config{}, Deps{Log: kgtest.Logger(t)})
	for _, js := range []string{
		`{"verdict":{"status":"correct","task_hash":"sha256:c"},"cached":true,"exec_ms":9000}`,
		`{"verdict":{"status":"correct","task_hash":"sha256:s"},"shared":true,"exec_ms":9000}`,
		`{"verdict":{"status":"correct","task_hash":"sha256:k","task_info":{}},"exec_ms":9000}`,
		`{"verdict":{"status":"invalid_submission","task_hash":"sha256:g"}}`,
		`{"verdict":{"status":"correct","task_hash":"sha256:r","task_name":"r"},"exec_ms":1500}`,
	} {
		srv.metrics.observe(result(t, js))
	}
	got := srv.metrics.verdicts.slowest.top(10)
	if len(got.Tasks) != 1 || got.Tasks[0].TaskHash != "sha256:r" || got.Tasks[0].MedianExecS != 1.5 {
		t.Errorf("ranked %+v, want only the run of r", got.Tasks)
	}
}

// GET /v1/stats/slowest-tasks answers the spec's schema, names registered
// tasks by id, checks its limit, and needs the admin scope.
func TestSlowestTasksEndpoint(t *testing.T) {
	doc := loadSpec(t)
	kgtest.SchemaMatches(t, doc, "SlowestTasks", reflect.TypeFor[slowestTasks]())
	kgtest.SchemaMatches(t, doc, "SlowTask", reflect.TypeFor[slowTask]())

	src := "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
	reg, err := tasks.NewRegistry([]tasks.Task{tasks.New("ci/plus_one", src, tasks.OriginSuite, time.Now())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, keys := keyFile(t, map[string]string{"ops": "admin", "trainer": "reward"})
	srv := New(Config{}, Deps{Tasks: reg, Keys: apikey.NewKeyring(f), Log: kgtest.Logger(t)})
	srv.metrics.observe(result(t, `{"verdict":{"status":"correct","task_hash":"`+eval.HashSource(src)+`","task_name":"plus_one"},"exec_ms":2000}`))
	srv.metrics.observe(result(t, `{"verdict":{"status":"timeout","task_hash":"sha256:inline","task_name":"inline"},"exec_ms":1000}`))
	h := srv.Handler()

	rec := request(t, h, "GET", "/v1/stats/slowest-tasks", "Bearer "+keys["ops"], nil)
	checkSpec(t, "GET", "/v1/stats/slowest-tasks", rec)
	var got slowestTasks
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if len(got.Tasks) != 2 || got.Tasks[0].TaskID != "ci/plus_one" || got.Tasks[1].TaskID != "" || got.Tasks[1].TaskName != "inline" {
		t.Errorf("tasks %+v, want ci/plus_one (2 s) then the inline one without an id", got.Tasks)
	}
	if strings.Contains(rec.Body.String(), `"task_id":""`) {
		t.Errorf("an empty task_id was sent: %s", rec.Body)
	}
	for _, bad := range []string{"0", "101", "ten"} {
		rec := request(t, h, "GET", "/v1/stats/slowest-tasks?limit="+bad, "Bearer "+keys["ops"], nil)
		checkSpec(t, "GET", "/v1/stats/slowest-tasks", rec)
		if rec.Code != 400 || decodeError(t, rec).Field != "limit" {
			t.Errorf("limit=%s: %d %s", bad, rec.Code, rec.Body)
		}
	}
	if rec := request(t, h, "GET", "/v1/stats/slowest-tasks?limit=1", "Bearer "+keys["ops"], nil); !strings.Contains(rec.Body.String(), "ci/plus_one") ||
		strings.Contains(rec.Body.String(), "inline") {
		t.Errorf("limit=1: %s", rec.Body)
	}
	if rec := request(t, h, "GET", "/v1/stats/slowest-tasks", "Bearer "+keys["trainer"], nil); rec.Code != 403 {
		t.Errorf("a reward key: %d, want 403 (admin scope)", rec.Code)
	}
}

// Ids are looked up once a minute, and a registry that fails costs the ids,
// never the ranking.
func TestSlowestIDMemo(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := newSlowest(8, func() time.Time { return now })
	s.add("sha256:a", "a", 1000, 0)
	lists := 0
	list := func(context.Context) (map[string]string, error) {
		lists++
		return map[string]string{"sha256:a": "ci/a"}, nil
	}
	for range 3 {
		ts := s.top(10).Tasks
		if err := s.withIDs(t.Context(), ts, list); err != nil || ts[0].TaskID != "ci/a" {
			t.Fatalf("%+v %v", ts, err)
		}
	}
	if lists != 1 {
		t.Errorf("the registry was listed %d times in a minute, want 1", lists)
	}
	now = now.Add(2 * time.Minute)
	failing := func(context.Context) (map[string]string, error) { return nil, errors.New("kv down") }
	ts := s.top(10).Tasks
	if err := s.withIDs(t.Context(), ts, failing); err == nil {
		t.Error("a failing registry: no error")
	}
}
